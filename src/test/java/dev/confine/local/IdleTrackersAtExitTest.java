package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Capability.Dimension;
import dev.confine.testing.HostRequirements;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The tree cgroups a JVM keeps idle are gone once it exits normally, trackers included. */
@Timeout(120)
class IdleTrackersAtExitTest {
  @TempDir Path tmp;

  @Test
  void aJvmThatRanOnlyUncappedExecsLeavesNoTreeCgroupWhenItExits() throws Exception {
    LocalRunner probe = LocalRunner.create(tmp.toString());
    HostRequirements.require(
        probe.capabilities().stream()
            .anyMatch(c -> c.dimension() == Dimension.TREE_KILL && c.detail().contains("cgroup")),
        "no tree cgroups here: " + probe.capabilities());
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                IdleTrackersAtExitMain.class.getName())
            .redirectErrorStream(true)
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertThat(p.exitValue()).as(out).isZero();
    long pid = Long.parseLong(out.lines().reduce((a, b) -> b).orElseThrow());
    String prefix = "confine-" + pid + "-";
    try (Stream<Path> s = Files.walk(Path.of("/sys/fs/cgroup"), 4)) {
      assertThat(
              s.filter(d -> d.getFileName() != null)
                  .filter(d -> d.getFileName().toString().startsWith(prefix)))
          .as("tree cgroups of the JVM that exited")
          .isEmpty();
    }
  }
}
