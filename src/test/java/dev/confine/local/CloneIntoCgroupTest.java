package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Capability.Dimension;
import dev.confine.CapsMechanism;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.spawn.Spawner;
import dev.confine.testing.HostRequirements;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Race-free cgroup v2 placement with glibc 2.39's posix_spawnattr_setcgroup_np (clone3
 * CLONE_INTO_CGROUP). Runs for real under a newer glibc: CI runs this tag inside a Debian 13 root
 * (scripts/lib/in-newer-glibc); on glibc 2.36 hosts it is excluded from the main run.
 */
@Tag("newer-glibc")
@Timeout(120)
class CloneIntoCgroupTest {
  @TempDir Path root;

  private LocalRunner v2Runner() {
    HostRequirements.require(
        Spawner.spawnIntoCgroupAvailability().isAvailable(),
        "glibc older than 2.39 has no posix_spawnattr_setcgroup_np (run this tag under"
            + " scripts/lib/in-newer-glibc)");
    LocalRunner r = LocalRunner.builder(root.toString()).caps(CapsMechanism.CGROUP_V2).build();
    HostRequirements.require(
        r.enforcement().cpuCap(), "no usable cgroup v2 hierarchy: " + r.capabilities());
    return r;
  }

  private static ExecOptions budget(Duration timeout) {
    return ExecOptions.builder()
        .timeout(timeout)
        .resources(ResourceLimits.builder().cpuMillicores(1000).build())
        .build();
  }

  @Test
  void placementIsReportedRaceFree() {
    assertThat(v2Runner().capabilities())
        .filteredOn(c -> c.dimension() == Dimension.CPU)
        .singleElement()
        .satisfies(c -> assertThat(c.detail()).contains("race-free (clone3 CLONE_INTO_CGROUP)"));
  }

  @Test
  void theChildIsInItsCgroupFromItsFirstInstruction() {
    LocalRunner r = v2Runner();
    for (int i = 0; i < 50; i++) {
      ExecResult res = r.exec("cat", List.of("/proc/self/cgroup"), budget(Duration.ofSeconds(10)));
      assertThat(res.stdoutText()).as("run %d", i).containsPattern("(?m)^0::/.*confine-\\d+-\\d+$");
    }
  }

  @Test
  void anImmediatelyForkedSetsidEscapeeIsHeldAndKilled() {
    LocalRunner r = v2Runner();
    for (int i = 0; i < 20; i++) {
      SandboxException e;
      try {
        r.exec(
            "sh",
            List.of("-c", "setsid sleep 100 & echo $!; sleep 100"),
            budget(Duration.ofMillis(300)));
        throw new AssertionError("expected a timeout");
      } catch (SandboxException ex) {
        e = ex;
      }
      assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
      long escapee =
          Long.parseLong(
              e.partialResult().orElseThrow().stdoutText().lines().findFirst().orElseThrow());
      assertThat(LocalRunnerLifecycleTest.gone(escapee))
          .as("escapee %d of run %d", escapee, i)
          .isTrue();
    }
  }
}
