package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Capability.Dimension;
import dev.confine.CapsMechanism;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.Thrown;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15 finding 15: {@code cpuMillicores} is the seed's budget (timeout x millicores / 1000 of
 * CPU time, killed when spent, BUDGET_EXCEEDED) and never a throttle; throttling is {@code
 * cpuThrottleMillicores}, held by a CPU controller and refused where there is none.
 */
@Timeout(60)
class CpuBudgetAndThrottleTest {
  @TempDir Path root;

  private LocalRunner runner(CapsMechanism caps) {
    LocalRunner r = LocalRunner.builder(root.toString()).caps(caps).build();
    HostRequirements.require(
        r.enforcement().cpuCap(), caps + " cannot enforce a CPU budget here: " + r.capabilities());
    return r;
  }

  private static Duration cpu(ExecResult r) {
    return r.usage().cpuUser().plus(r.usage().cpuSystem());
  }

  /** 250 millicores over 4 s: a budget of 1 s of CPU, which a busy loop spends in about 1 s. */
  private static SandboxException burnQuarterOfFourSeconds(LocalRunner r, String before) {
    return Thrown.sandbox(
        () ->
            r.exec(
                "sh",
                List.of("-c", before + "while :; do :; done"),
                ExecOptions.builder()
                    .timeout(Duration.ofSeconds(4))
                    .resources(ResourceLimits.builder().cpuMillicores(250).build())
                    .build()));
  }

  @Test
  void v1KillsABusyLoopAtItsBudgetAndNeverThrottlesIt() {
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    // The child says which v1 cpu cgroup it is in: a tree cgroup of ours there would throttle it.
    SandboxException e = burnQuarterOfFourSeconds(r, "grep ':cpu:' /proc/self/cgroup; ");
    assertThat(e.kind()).as(e.getMessage()).isEqualTo(Kind.BUDGET_EXCEEDED);
    assertThat(e.getMessage()).contains("cpu resource cap exceeded");
    ExecResult partial = e.partialResult().orElseThrow();
    assertThat(cpu(partial)).isBetween(Duration.ofMillis(950), Duration.ofMillis(1600));
    assertThat(partial.stdoutText()).startsWith("1:cpu:/").doesNotContain("confine-");
  }

  @Test
  void theSamplerKillsABusyLoopAtItsBudget() {
    LocalRunner r = runner(CapsMechanism.PROC_SAMPLER);
    SandboxException e = burnQuarterOfFourSeconds(r, "");
    assertThat(e.kind()).as(e.getMessage()).isEqualTo(Kind.BUDGET_EXCEEDED);
    assertThat(cpu(e.partialResult().orElseThrow()))
        .isBetween(Duration.ofMillis(950), Duration.ofMillis(1600));
  }

  @Test
  void v1ThrottleAloneHoldsTwoBurnersToTheirShare() {
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    HostRequirements.require(
        r.enforcement().cpuThrottle(), "no v1 cpu controller here: " + r.capabilities());
    // Two burners under 250 millicores for 2 s: about 0.25 of a core between them, where they
    // would take up to two cores (or all this machine gives them) unthrottled. No budget: the
    // timeout ends it.
    SandboxException e =
        Thrown.sandbox(
            () ->
                r.exec(
                    "sh",
                    List.of("-c", "(while :; do :; done) & while :; do :; done"),
                    ExecOptions.builder()
                        .timeout(Duration.ofSeconds(2))
                        .resources(ResourceLimits.builder().cpuThrottleMillicores(250).build())
                        .build()));
    assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
    ExecResult partial = e.partialResult().orElseThrow();
    double share = (double) cpu(partial).toNanos() / partial.wallTime().toNanos();
    assertThat(share).isBetween(0.05, 0.5);
  }

  @Test
  void aThrottleIsRefusedWhereNoCpuControllerHoldsIt() {
    ExecOptions throttled =
        ExecOptions.builder()
            .resources(ResourceLimits.builder().cpuThrottleMillicores(500).build())
            .build();
    for (CapsMechanism m :
        List.of(CapsMechanism.PROC_SAMPLER, CapsMechanism.NONE, CapsMechanism.CGROUP_V2)) {
      LocalRunner r = LocalRunner.builder(root.toString()).caps(m).build();
      if (r.enforcement().cpuThrottle()) {
        continue; // a v2 hierarchy that delegates the cpu controller (not this host's)
      }
      SandboxException e = Thrown.sandbox(() -> r.exec("true", List.of(), throttled));
      assertThat(e.kind()).as(m.name()).isEqualTo(Kind.NOT_AVAILABLE);
      assertThat(e.getMessage()).contains("cannot throttle CPU");
      assertThat(r.capabilities())
          .filteredOn(c -> c.dimension() == Dimension.CPU_THROTTLE)
          .singleElement()
          .satisfies(c -> assertThat(c.enforced()).isFalse());
    }
  }
}
