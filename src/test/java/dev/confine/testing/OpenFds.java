package dev.confine.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** This JVM's open file descriptors, as leak tests count them. */
public final class OpenFds {
  private OpenFds() {}

  /** The descriptors open now. */
  public static long count() {
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      return s.count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The descriptors open once the cgroup janitor is done and the idle tree cgroups kept for reuse
   * (each keeps its control files open) are removed: what an exec or session left behind. Whether a
   * tree's cgroup is kept idle depends on the host (its cgroup version, whether the tree was
   * killed), so a count that includes them differs between hosts.
   */
  public static long settled() {
    TreeCgroups.settle();
    return count();
  }
}
