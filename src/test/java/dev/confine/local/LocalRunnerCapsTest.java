package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.CapsMechanism;
import dev.confine.Enforcement;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.Thrown;
import dev.confine.testing.TreeCgroups;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Caps enforced by the kernel through cgroups, on this host's v1 and v2 hierarchies. */
@Timeout(120)
class LocalRunnerCapsTest {
  private static final long MIB = 1 << 20;

  @TempDir Path root;

  private LocalRunner runner(CapsMechanism caps) {
    LocalRunner r = LocalRunner.builder(root.toString()).caps(caps).build();
    HostRequirements.require(
        r.capabilities().stream()
            .anyMatch(c -> c.dimension() == Dimension.TREE_KILL && c.enforced()),
        caps + " cgroups are not usable here: " + r.capabilities());
    return r;
  }

  private static ExecOptions caps(ResourceLimits limits, Duration timeout) {
    return ExecOptions.builder().resources(limits).timeout(timeout).build();
  }

  @Test
  void v1MemoryBombIsKilledAtTheCapAndReportedAsBudgetExceeded() {
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    long cap = 64 * MIB;
    SandboxException e =
        Thrown.sandbox(
            () ->
                r.exec(
                    "sh",
                    List.of("-c", "head -c 1073741824 /dev/zero | tail"),
                    caps(
                        ResourceLimits.builder().memoryBytes(cap).build(),
                        Duration.ofSeconds(60))));
    assertThat(e.kind()).isEqualTo(Kind.BUDGET_EXCEEDED);
    assertThat(e.getMessage()).contains("memory resource cap exceeded");
    ExecResult partial = e.partialResult().orElseThrow();
    assertThat(partial.usage().peakMemoryBytes()).isPositive().isLessThanOrEqualTo(cap);
  }

  @Test
  void v1ForkBombIsHeldByThePidsCap() {
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    long start = System.nanoTime();
    ExecResult res =
        r.exec(
            "sh",
            List.of("-c", "i=0; while [ $i -lt 40 ]; do sleep 1 & i=$((i+1)); done; wait"),
            caps(ResourceLimits.builder().maxProcesses(8).build(), Duration.ZERO));
    assertThat(res.usage().pidsLimitHit()).isTrue();
    assertThat(res.exitCode()).isNotZero(); // the shell gives up when it cannot fork
    assertThat(res.stderrText()).containsIgnoringCase("fork");
    assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(5_000);
  }

  @Test
  void v1ACapOfOneProcessStillStartsTheChildButNothingMore() {
    // The spawning thread sits in the cgroup during the spawn; its slot must not count.
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    ExecResult res =
        r.exec(
            "sh",
            List.of("-c", "echo started; true | true"),
            caps(ResourceLimits.builder().maxProcesses(1).build(), Duration.ZERO));
    assertThat(res.stdoutText()).isEqualTo("started\n");
    assertThat(res.usage().pidsLimitHit()).isTrue();
    assertThat(res.exitCode()).isNotZero();
  }

  @Test
  void v1AnImmediatelyForkedSetsidEscapeeIsDeadAtTimeout() {
    // Race-free placement: the escapee is forked before anything could have moved the shell.
    assertEscapeeKilled(CapsMechanism.CGROUP_V1, "");
  }

  @Test
  void v2PostSpawnPlacementHoldsASetsidEscapeeForkedAfterPlacement() {
    // glibc 2.36 has no CLONE_INTO_CGROUP: the child is moved right after the spawn, so only what
    // it forks after that is held for sure (CloneIntoCgroupTest covers the race-free path).
    assertEscapeeKilled(CapsMechanism.CGROUP_V2, "sleep 0.3; ");
  }

  private void assertEscapeeKilled(CapsMechanism mechanism, String before) {
    LocalRunner r = runner(mechanism);
    SandboxException e =
        Thrown.sandbox(
            () ->
                r.exec(
                    "sh",
                    List.of("-c", before + "setsid sh -c 'sleep 100 & echo $!'; sleep 100"),
                    caps(
                        ResourceLimits.builder().cpuMillicores(1000).build(),
                        Duration.ofMillis(900))));
    assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
    long escapee =
        Long.parseLong(
            e.partialResult().orElseThrow().stdoutText().lines().findFirst().orElseThrow());
    assertThat(LocalRunnerLifecycleTest.gone(escapee)).isTrue();
  }

  @Test
  void v2CpuBudgetKillsTheTreeWhenSpent() {
    LocalRunner r = runner(CapsMechanism.CGROUP_V2);
    long start = System.nanoTime();
    // 2 s x 250 millicores = 0.5 s of CPU; without a v2 cpu controller nothing throttles.
    SandboxException e =
        Thrown.sandbox(
            () ->
                r.exec(
                    "sh",
                    List.of("-c", "while :; do :; done"),
                    caps(
                        ResourceLimits.builder().cpuMillicores(250).build(),
                        Duration.ofSeconds(2))));
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    assertThat(e.kind()).isEqualTo(Kind.BUDGET_EXCEEDED);
    assertThat(e.getMessage()).contains("cpu resource cap exceeded");
    Duration used = e.partialResult().orElseThrow().usage().cpuUser();
    assertThat(used).isBetween(Duration.ofMillis(450), Duration.ofMillis(900));
    assertThat(elapsedMs).isLessThan(1_800);
  }

  @Test
  void v2WithoutControllersSaysSoAndRefusesMemoryAndPidsCaps() {
    LocalRunner r = runner(CapsMechanism.CGROUP_V2);
    Enforcement en = r.enforcement();
    Capability memory =
        r.capabilities().stream()
            .filter(c -> c.dimension() == Dimension.MEMORY)
            .findFirst()
            .orElseThrow();
    if (en.memoryCap()) {
      assertThat(memory.detail()).contains("memory.max");
      return; // a pure v2 host with delegated controllers
    }
    assertThat(memory.detail()).contains("memory controller");
    assertThat(en.cpuCap()).isTrue();
    SandboxException e =
        Thrown.sandbox(
            () ->
                r.exec(
                    "true",
                    List.of(),
                    caps(ResourceLimits.builder().memoryBytes(MIB << 6).build(), Duration.ZERO)));
    assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE);
  }

  @Test
  void capsAreReportedWithTheirMechanism() {
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    assertThat(r.enforcement().memoryCap()).isTrue();
    assertThat(r.enforcement().pidsCap()).isTrue();
    assertThat(r.enforcement().cpuCap()).isTrue();
    assertThat(r.capabilities())
        .filteredOn(c -> c.dimension() == Dimension.MEMORY)
        .singleElement()
        .satisfies(
            c ->
                assertThat(c.detail())
                    .contains("memory.limit_in_bytes")
                    .contains("moved into its memory cgroup right after the spawn")
                    .contains("no JVM thread ever sits in a memory cgroup"));
  }

  @Test
  void samplerForcedOnKillsAMemoryHogAndReportsItsPeak() {
    LocalRunner r = LocalRunner.builder(root.toString()).caps(CapsMechanism.PROC_SAMPLER).build();
    assertThat(r.enforcement().memoryCap()).isTrue();
    assertThat(r.enforcement().pidsCap()).isFalse();
    assertThat(r.capabilities())
        .filteredOn(c -> c.dimension() == Dimension.MEMORY)
        .singleElement()
        .satisfies(c -> assertThat(c.detail()).contains("/proc sampler"));
    long cap = 64 * MIB;
    SandboxException e =
        Thrown.sandbox(
            () ->
                r.exec(
                    "sh",
                    List.of("-c", "head -c 2147483648 /dev/zero | tail"),
                    caps(
                        ResourceLimits.builder().memoryBytes(cap).build(),
                        Duration.ofSeconds(60))));
    assertThat(e.kind()).isEqualTo(Kind.BUDGET_EXCEEDED);
    assertThat(e.getMessage()).contains("memory");
    assertThat(e.partialResult().orElseThrow().usage().peakMemoryBytes())
        .isGreaterThanOrEqualTo(cap);
  }

  @Test
  void samplerForcedOnKillsACpuBurnerAtItsBudget() {
    LocalRunner r = LocalRunner.builder(root.toString()).caps(CapsMechanism.PROC_SAMPLER).build();
    long start = System.nanoTime();
    SandboxException e =
        Thrown.sandbox(
            () ->
                r.exec(
                    "sh",
                    List.of("-c", "while :; do :; done"),
                    caps(
                        ResourceLimits.builder().cpuMillicores(200).build(),
                        Duration.ofSeconds(2))));
    assertThat(e.kind()).isEqualTo(Kind.BUDGET_EXCEEDED);
    assertThat(e.getMessage()).contains("cpu");
    assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(1_500);
    SandboxException pids =
        Thrown.sandbox(
            () ->
                r.exec(
                    "true",
                    List.of(),
                    caps(ResourceLimits.builder().maxProcesses(4).build(), Duration.ZERO)));
    assertThat(pids.kind()).isEqualTo(Kind.NOT_AVAILABLE);
  }

  @Test
  void noCapsMeansNotAvailableWithTheReason() {
    LocalRunner r = LocalRunner.builder(root.toString()).caps(CapsMechanism.NONE).build();
    assertThat(r.enforcement().memoryCap()).isFalse();
    SandboxException e =
        Thrown.sandbox(
            () ->
                r.exec(
                    "true",
                    List.of(),
                    caps(ResourceLimits.builder().maxProcesses(3).build(), Duration.ZERO)));
    assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE);
  }

  @Test
  @Timeout(600)
  void aThousandCappedExecsIncludingKillsLeaveNoCgroupBehind() throws Exception {
    LocalRunner v1 = runner(CapsMechanism.CGROUP_V1);
    LocalRunner v2 = runner(CapsMechanism.CGROUP_V2);
    for (int i = 0; i < 1000; i++) {
      LocalRunner r = i % 2 == 0 ? v1 : v2;
      switch (i % 4) {
        case 0, 1 ->
            r.exec(
                "true",
                List.of(),
                caps(ResourceLimits.builder().cpuMillicores(500).build(), Duration.ofSeconds(5)));
        case 2 ->
            Thrown.sandbox(
                () ->
                    r.exec(
                        "sleep",
                        List.of("5"),
                        caps(
                            ResourceLimits.builder().cpuMillicores(500).build(),
                            Duration.ofMillis(5))));
        default ->
            Thrown.sandbox(
                () ->
                    r.exec(
                        "sh",
                        List.of("-c", "sleep 5 & sleep 5"),
                        caps(
                            ResourceLimits.builder().cpuMillicores(500).build(),
                            Duration.ofMillis(20))));
      }
    }
    assertThat(dev.confine.linux.cgroup.CgroupJanitor.awaitIdle(Duration.ofSeconds(10))).isTrue();
    // What is left are the idle cgroups kept for reuse, bounded; removing them leaves nothing.
    assertThat(TreeCgroups.distinct())
        .isLessThanOrEqualTo(dev.confine.linux.cgroup.CgroupPool.MAX_IDLE);
    assertThat(TreeCgroups.leftBehind()).isEmpty();
  }

  @Test
  void aReusedV1CgroupStartsEachTreeAfresh() throws Exception {
    // Sequential execs with the same controllers reuse one idle cgroup (the janitor recycles it
    // between them): limits are rewritten up and down, and the counters that reach the result
    // (process cap hits, peak memory, CPU) are the tree's own. (A tree that was killed may leave
    // zombies that init has not reaped yet; such a cgroup is retired, so kills come last.)
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    assertThat(TreeCgroups.leftBehind()).isEmpty();
    ResourceLimits small = ResourceLimits.builder().memoryBytes(64 * MIB).maxProcesses(8).build();
    ResourceLimits large = ResourceLimits.builder().memoryBytes(256 * MIB).maxProcesses(64).build();
    String allocate128 = "head -c 134217728 /dev/zero | tail";

    // Forks refused by a cap of one process (the shell alone: nothing is orphaned or killed).
    ResourceLimits one = ResourceLimits.builder().memoryBytes(64 * MIB).maxProcesses(1).build();
    ExecResult forks =
        r.exec("sh", List.of("-c", "true | true"), caps(one, Duration.ofSeconds(30)));
    assertThat(forks.usage().pidsLimitHit()).isTrue();
    awaitRecycled();

    // Raised limits on the same cgroup: 128 MiB fits under 256 MiB; no cap was hit this time.
    ExecResult fits = r.exec("sh", List.of("-c", allocate128), caps(large, Duration.ofSeconds(30)));
    assertThat(fits.exitCode()).isZero();
    assertThat(fits.usage().pidsLimitHit()).isFalse();
    assertThat(fits.usage().peakMemoryBytes()).isGreaterThan(100 * MIB);
    awaitRecycled();

    // A small tree afterwards: its peak and CPU are its own, nothing of the 128 MiB before.
    ExecResult quiet = r.exec("true", List.of(), caps(small, Duration.ofSeconds(30)));
    assertThat(quiet.exitCode()).isZero();
    assertThat(quiet.usage().peakMemoryBytes()).isBetween(0L, 16 * MIB);
    assertThat(quiet.usage().cpuUser().plus(quiet.usage().cpuSystem()))
        .isLessThan(Duration.ofMillis(100));
    assertThat(quiet.usage().pidsLimitHit()).isFalse();
    awaitRecycled();
    assertThat(TreeCgroups.distinct()).isEqualTo(1); // one cgroup served all three

    // Lowered again: 128 MiB no longer fits under 64 MiB.
    SandboxException lowered =
        Thrown.sandbox(
            () -> r.exec("sh", List.of("-c", allocate128), caps(small, Duration.ofSeconds(30))));
    assertThat(lowered.kind()).isEqualTo(Kind.BUDGET_EXCEEDED);
    awaitRecycled();
    // The OOM kill before is not this tree's, whichever cgroup it gets.
    assertThat(r.exec("true", List.of(), caps(small, Duration.ofSeconds(30))).exitCode()).isZero();
    assertThat(TreeCgroups.leftBehind()).isEmpty();
  }

  private static void awaitRecycled() throws InterruptedException {
    assertThat(dev.confine.linux.cgroup.CgroupJanitor.awaitIdle(Duration.ofSeconds(10))).isTrue();
  }

  @Test
  void aCappedExecOrSessionOfAMissingProgramLeavesNoCgroup() throws Exception {
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    ExecOptions capped =
        caps(ResourceLimits.builder().memoryBytes(64 * MIB).build(), Duration.ZERO);
    assertThat(Thrown.sandbox(() -> r.exec("no-such-program-confine", List.of(), capped)).kind())
        .isEqualTo(Kind.NOT_FOUND);
    assertThat(
            Thrown.sandbox(
                    () ->
                        r.start(
                            dev.confine.session.ProcessSpec.pipes(
                                    List.of("no-such-program-confine"))
                                .withOptions(capped)))
                .kind())
        .isEqualTo(Kind.NOT_FOUND);
    assertThat(TreeCgroups.leftBehind()).isEmpty();
  }
}
