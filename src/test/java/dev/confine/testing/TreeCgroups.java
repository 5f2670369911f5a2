package dev.confine.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.cgroup.CgroupJanitor;
import dev.confine.linux.cgroup.Cgroups;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The tree cgroups this JVM made, as leak tests look for them. */
public final class TreeCgroups {
  private TreeCgroups() {}

  /**
   * Waits until the janitor has recycled every released tree cgroup, then removes the idle ones
   * kept for reuse (each keeps its control files open): afterwards only what was left behind
   * remains.
   */
  public static void settle() {
    try {
      assertThat(CgroupJanitor.awaitIdle(Duration.ofSeconds(10))).isTrue();
      Cgroups.removeAllIdle();
      assertThat(CgroupJanitor.awaitIdle(Duration.ofSeconds(10))).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The tree cgroup directories left behind once {@link #settle settled}: should be none. */
  public static List<Path> leftBehind() {
    settle();
    return all();
  }

  /** The distinct tree cgroups (one per tree, whatever the hierarchies) of this JVM now. */
  public static long distinct() {
    return all().stream().map(p -> p.getFileName().toString()).distinct().count();
  }

  /** Every tree cgroup directory this JVM may have made, in every hierarchy, now. */
  public static List<Path> all() {
    List<Path> found = new ArrayList<>();
    String mine = "confine-" + ProcessHandle.current().pid() + "-";
    try (Stream<Path> s = Files.walk(Path.of("/sys/fs/cgroup"), 4)) {
      s.filter(p -> p.getFileName() != null && p.getFileName().toString().startsWith(mine))
          .forEach(found::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }
}
