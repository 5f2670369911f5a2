package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.CapsMechanism;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.SandboxException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cgroup parent is used or refused, never ignored: trees are made beneath a delegated v2
 * directory when the runner tracks them with cgroup v2, and a parent that cannot apply (not a v2
 * cgroup, or another mechanism chosen) makes {@code build()} refuse with the reason.
 */
class CgroupParentTest {
  @TempDir Path root;
  private Path parent; // a v2 cgroup this test made, or null

  @BeforeEach
  void engine() {
    HostRequirements.require(NativeAccess.availability().prefixed("the engine cannot run here: "));
  }

  @AfterEach
  void removeParent() throws IOException {
    if (parent != null && Files.isDirectory(parent)) {
      try (Stream<Path> children = Files.list(parent)) {
        for (Path c : children.filter(Files::isDirectory).toList()) {
          Files.delete(c); // the idle tree cgroups the runner left pooled
        }
      }
      Files.delete(parent);
    }
  }

  @Test
  void aParentThatIsNoCgroupIsRefusedWithTheReason() {
    assertThatThrownBy(
            () ->
                LocalRunner.builder(root.toString())
                    .cgroupParent("/nonexistent/confine-parent")
                    .build())
        .isInstanceOfSatisfying(
            SandboxException.class,
            e -> assertThat(e.kind()).isEqualTo(SandboxException.Kind.NOT_AVAILABLE))
        .hasMessageContaining("cgroup parent /nonexistent/confine-parent cannot be used");
  }

  @Test
  void aParentWithTheSamplerChosenIsRefused() throws IOException {
    String p = v2Parent().map(Path::toString).orElse("/nonexistent/confine-parent");
    assertThatThrownBy(
            () ->
                LocalRunner.builder(root.toString())
                    .caps(CapsMechanism.PROC_SAMPLER)
                    .cgroupParent(p)
                    .build())
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("cgroup parent " + p + " cannot be used");
  }

  @Test
  void withCgroupV2TheTreesAreMadeBeneathTheParent() throws IOException {
    HostRequirements.requireRoot();
    Optional<Path> p = v2Parent();
    HostRequirements.require(p.isPresent(), "no writable cgroup v2 hierarchy here");
    LocalRunner runner =
        LocalRunner.builder(root.toString())
            .caps(CapsMechanism.CGROUP_V2)
            .cgroupParent(p.get().toString())
            .build();
    // Before glibc 2.39 the child is moved into its tree's cgroup right after the spawn, so it
    // may look before the move: it waits (up to 5 s) until it is out of the root, then reports.
    ExecResult r =
        runner.exec(
            "sh",
            List.of(
                "-c",
                "for i in $(seq 100); do grep -q '^0::/$' /proc/self/cgroup || break; sleep 0.05;"
                    + " done; cat /proc/self/cgroup"),
            ExecOptions.defaults());
    assertThat(r.exitCode()).as(r.stderrText()).isZero();
    // The v2 line names the child's cgroup from the hierarchy's root: beneath the parent.
    String beneath = "0::/" + v2Mount().orElseThrow().relativize(p.get()) + "/";
    assertThat(r.stdoutText().lines().filter(l -> l.startsWith("0::")))
        .singleElement()
        .satisfies(l -> assertThat(l).startsWith(beneath));
  }

  /** A fresh cgroup in the v2 hierarchy when it is mounted and writable here. */
  private Optional<Path> v2Parent() throws IOException {
    Optional<Path> mount = v2Mount();
    if (mount.isEmpty() || !HostRequirements.isRoot()) {
      return Optional.empty();
    }
    parent = mount.get().resolve("confine-parent-test-" + UUID.randomUUID());
    try {
      Files.createDirectory(parent);
    } catch (IOException e) {
      parent = null;
      return Optional.empty();
    }
    return Optional.of(parent);
  }

  private static Optional<Path> v2Mount() throws IOException {
    try (Stream<String> lines = Files.lines(Path.of("/proc/self/mountinfo"))) {
      return lines
          .filter(l -> l.contains(" - cgroup2 "))
          .map(l -> Path.of(l.split(" ")[4]))
          .findFirst();
    }
  }
}
