package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.Enforcement;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.confined.ConfinedModes.Mode;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Finding 5 of issue 15: memory, CPU budget and process caps hold under confinement as under the
 * local runner, in every confined mode this host can run (as root by cgroups, the confinement
 * thread placed in the tree's cgroups; as nobody by the /proc sampler); and finding 8: a private
 * TMPDIR is reused only when nothing of its last tree can be alive.
 */
@Tag("confinement")
class ConfinedCapsTest {
  private static final long MIB = 1L << 20;

  @TempDir Path root;

  @BeforeEach
  void needsTheConfinement() throws IOException {
    HostRequirements.require(Landlock.availability());
    HostRequirements.require(SeccompFilter.availability());
    HostRequirements.requireProgram("python3");
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxrwxrwx"));
  }

  static Stream<Mode> modes() {
    return ConfinedModes.available().stream();
  }

  private static ExecOptions options(Mode mode, Duration timeout, ResourceLimits limits) {
    return ExecOptions.builder()
        .timeout(timeout)
        .net(mode.options().net())
        .resources(limits)
        .build();
  }

  @ParameterizedTest
  @MethodSource("modes")
  void theReportSaysWhichCapsHold(Mode mode) {
    ConfinedRunner r = mode.runner(root);
    Enforcement e = r.enforcement();
    assertThat(e.memoryCap()).isTrue();
    assertThat(e.cpuCap()).isTrue();
    assertThat(e.pidsCap()).isEqualTo(HostRequirements.isRoot());
    assertThat(r.capabilities())
        .filteredOn(
            c ->
                List.of(Dimension.MEMORY, Dimension.CPU, Dimension.TREE_KILL)
                    .contains(c.dimension()))
        .hasSize(3)
        .allSatisfy(c -> assertThat(c.enforced()).as(c.toString()).isTrue());
    if (HostRequirements.isRoot()) {
      assertThat(r.capabilities())
          .filteredOn(c -> c.dimension() == Dimension.TREE_KILL)
          .singleElement()
          .extracting(Capability::detail)
          .asString()
          .contains("cannot leave their cgroup");
    }
  }

  @ParameterizedTest
  @MethodSource("modes")
  void aMemoryBombIsKilledAtItsCap(Mode mode) {
    long cap = 64 * MIB;
    String bomb =
        "chunks = []\n"
            + "for i in range(64):\n"
            + "    chunks.append(bytearray(8 * 1024 * 1024))\n" // touched: zero-filled
            + "print('survived')\n";
    SandboxException e =
        catchThrowableOfType(
            SandboxException.class,
            () ->
                mode.runner(root)
                    .exec(
                        ConfinedModes.PYTHON,
                        List.of("-c", bomb),
                        options(
                            mode,
                            Duration.ofSeconds(60),
                            ResourceLimits.builder().memoryBytes(cap).build())));
    assertThat(e).isNotNull();
    assertThat(e.kind()).as(e.getMessage()).isEqualTo(Kind.BUDGET_EXCEEDED);
    ExecResult partial = e.partialResult().orElseThrow();
    assertThat(partial.stdoutText()).doesNotContain("survived");
    if (HostRequirements.isRoot()) { // a cgroup: exact
      assertThat(partial.usage().peakMemoryBytes()).isPositive().isLessThanOrEqualTo(cap);
    }
  }

  @ParameterizedTest
  @MethodSource("modes")
  void aCpuBurnerIsKilledWhenItsBudgetIsSpent(Mode mode) {
    // 250 millicores over 4 s: a budget of 1 s of CPU, spent at full speed, never throttled.
    SandboxException e =
        catchThrowableOfType(
            SandboxException.class,
            () ->
                mode.runner(root)
                    .exec(
                        "sh",
                        List.of("-c", "while :; do :; done"),
                        options(
                            mode,
                            Duration.ofSeconds(4),
                            ResourceLimits.builder().cpuMillicores(250).build())));
    assertThat(e).isNotNull();
    assertThat(e.kind()).as(e.getMessage()).isEqualTo(Kind.BUDGET_EXCEEDED);
    Duration cpu = e.partialResult().orElseThrow().usage().cpuUser();
    assertThat(cpu).isNotNull();
    assertThat(cpu.toMillis()).isBetween(500L, 2_500L);
  }

  @ParameterizedTest
  @MethodSource("modes")
  void aForkBombIsHeldAtItsProcessCap(Mode mode) {
    ResourceLimits limits = ResourceLimits.builder().maxProcesses(8).build();
    String bomb = "for i in $(seq 50); do sleep 3 & done; wait; echo done";
    if (!HostRequirements.isRoot()) { // the sampler has no process cap
      SandboxException e =
          catchThrowableOfType(
              SandboxException.class,
              () ->
                  mode.runner(root)
                      .exec(
                          "sh",
                          List.of("-c", bomb),
                          options(mode, Duration.ofSeconds(30), limits)));
      assertThat(e).isNotNull();
      assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE);
      return;
    }
    ExecResult r =
        mode.runner(root)
            .exec("sh", List.of("-c", bomb), options(mode, Duration.ofSeconds(30), limits));
    assertThat(r.stderrText()).contains("fork");
    assertThat(r.usage().pidsLimitHit()).isTrue();
  }

  @Test
  void aTmpdirIsNeverHandedOnWhileSomethingCanStillWriteIntoIt() throws Exception {
    ConfinedRunner runner = ConfinedRunner.builder(root.toString()).rootless(true).build();
    ExecOptions o = ExecOptions.builder().timeout(Duration.ofSeconds(30)).build();
    // The first exec leaves an escapee that keeps planting files in its TMPDIR: a double fork out
    // of the session, the way a daemon detaches.
    String plant =
        "echo \"$TMPDIR\"; (setsid sh -c 'i=0; while [ $i -lt 300 ]; do"
            + " touch \"$TMPDIR/planted-$i\" 2>/dev/null; i=$((i+1)); sleep 0.01; done' &"
            + " ) </dev/null >/dev/null 2>&1";
    ExecResult first = runner.exec("sh", List.of("-c", plant), o);
    String firstTmp = first.stdoutText().strip();
    ExecResult second =
        runner.exec(
            "sh", List.of("-c", "echo \"$TMPDIR\"; sleep 0.5; ls -A \"$TMPDIR\" | wc -l"), o);
    List<String> lines = second.stdoutText().lines().toList();
    assertThat(lines.get(1).strip()).as("files in the second exec's TMPDIR").isEqualTo("0");
    if (HostRequirements.isRoot()) {
      // A cgroup held the whole tree from its start: the escapee is dead, the TMPDIR reused.
      assertThat(first.leftoversKilled()).isTrue();
      assertThat(lines.get(0)).isEqualTo(firstTmp);
    } else {
      // The sampler cannot rule out an escapee it never saw: a new TMPDIR.
      assertThat(lines.get(0)).isNotEqualTo(firstTmp);
    }
  }
}
