package dev.confine.host;

import dev.confine.ByteStrings;
import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
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

  /** Entries of what {@code source} returns (this process's: {@link #ofThisProcess}). */
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

  /**
   * This process's environment with its exact bytes, as {@link ByteStrings}: {@link
   * System#getenv()} decodes names and values in the locale's encoding and turns bytes it cannot
   * decode into U+FFFD, so a value that is not UTF-8 would reach a child changed. Read from {@code
   * /proc/self/environ} (the environment the JVM was started with, which is what {@code
   * System.getenv()} holds too) and used only when it matches {@code System.getenv()} entry for
   * entry once decoded as the JVM decodes; otherwise (no /proc, or a launcher that changed the
   * environment) {@code System.getenv()} as it is.
   */
  public static Map<String, String> ofThisProcess() {
    return Raw.ENV;
  }

  private static final class Raw {
    static final Map<String, String> ENV = read();

    private static Map<String, String> read() {
      Map<String, String> jvm = System.getenv();
      byte[] raw;
      try {
        raw = Files.readAllBytes(Path.of("/proc/self/environ"));
      } catch (IOException | RuntimeException e) {
        return jvm;
      }
      Map<String, String> exact = matching(raw, jvm, jvmCharset());
      return exact == null ? jvm : exact;
    }
  }

  /** The charset the JVM decodes its environment and arguments with. */
  static Charset jvmCharset() {
    try {
      return Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
    } catch (RuntimeException e) {
      return StandardCharsets.UTF_8;
    }
  }

  /**
   * The NUL-separated {@code NAME=VALUE} entries of {@code raw} as ByteStrings, when, decoded with
   * {@code jvmCharset}, they are exactly {@code jvm}; else null. As the JDK does, an entry without
   * '=' or with an empty name is skipped and the first of two entries with one name wins.
   */
  static Map<String, String> matching(byte[] raw, Map<String, String> jvm, Charset jvmCharset) {
    Map<String, String> exact = new LinkedHashMap<>();
    Map<String, String> asJvm = new LinkedHashMap<>();
    int start = 0;
    for (int i = 0; i <= raw.length; i++) {
      if (i < raw.length && raw[i] != 0) {
        continue;
      }
      int eq = -1;
      for (int k = start; k < i; k++) {
        if (raw[k] == '=') {
          eq = k;
          break;
        }
      }
      if (eq > start) {
        String name = ByteStrings.decode(raw, start, eq - start);
        if (!exact.containsKey(name)) {
          exact.put(name, ByteStrings.decode(raw, eq + 1, i - eq - 1));
          asJvm.put(
              new String(raw, start, eq - start, jvmCharset),
              new String(raw, eq + 1, i - eq - 1, jvmCharset));
        }
      }
      start = i + 1;
    }
    return asJvm.equals(jvm) && asJvm.size() == exact.size()
        ? Collections.unmodifiableMap(exact)
        : null;
  }
}
