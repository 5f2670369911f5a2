package dev.confine.local;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The host environment a runner's children inherit from, as {@code NAME=VALUE} entries, built once:
 * the JVM's environment never changes. Shared by the runners that run host processes; internal, not
 * API.
 */
public final class HostEnvironment {
  private final Supplier<Map<String, String>> source;
  private volatile List<String> entries;

  /** Entries of what {@code source} returns (this JVM's environment: {@code System::getenv}). */
  public HostEnvironment(Supplier<Map<String, String>> source) {
    this.source = source;
  }

  /** The entries, built on first use. */
  public List<String> entries() {
    List<String> e = entries;
    if (e == null) {
      Map<String, String> env = source.get();
      List<String> built = new ArrayList<>(env.size());
      env.forEach((k, v) -> built.add(k + "=" + v));
      entries = e = List.copyOf(built);
    }
    return e;
  }
}
