package dev.confine.local;

import static dev.confine.testing.SessionReads.readUntil;
import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Capability.Dimension;
import dev.confine.CapsMechanism;
import dev.confine.ExecOptions;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.loop.EventLoop;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.JvmChildren;
import dev.confine.testing.OpenFds;
import dev.confine.testing.TreeCgroups;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Sessions under caps, and hundreds of them at once leaving nothing behind. */
@Timeout(180)
class LocalSessionCapsAndLeaksTest {
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

  @Test
  void aMemoryBombInASessionIsKilledAndReportedAsBudgetExceeded() throws Exception {
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    ExecOptions opts =
        ExecOptions.builder()
            .resources(ResourceLimits.builder().memoryBytes(64 * MIB).build())
            .build();
    try (ProcessSession s =
        r.start(
            ProcessSpec.pipes(List.of("sh", "-c", "head -c 1073741824 /dev/zero | tail"))
                .withOptions(opts))) {
      ProcessExit exit = s.waitFor();
      assertThat(exit.reason()).isEqualTo(ProcessExit.Reason.BUDGET_EXCEEDED);
      assertThat(exit.code()).isEqualTo(-1);
      assertThat(exit.error().kind()).isEqualTo(Kind.BUDGET_EXCEEDED);
      assertThat(exit.error()).hasMessageContaining("memory resource cap exceeded");
    }
    assertThat(TreeCgroups.leftBehind()).isEmpty();
  }

  @Test
  void aCpuBudgetInASessionKillsTheTreeWhenSpent() throws Exception {
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    ExecOptions opts =
        ExecOptions.builder()
            .timeout(Duration.ofSeconds(4))
            .resources(ResourceLimits.builder().cpuMillicores(100).build())
            .build();
    try (ProcessSession s =
        r.start(
            ProcessSpec.terminal(List.of("sh", "-c", "while :; do :; done")).withOptions(opts))) {
      ProcessExit exit = s.waitFor();
      assertThat(exit.reason()).isEqualTo(ProcessExit.Reason.BUDGET_EXCEEDED);
      assertThat(exit.error()).hasMessageContaining("cpu resource cap exceeded");
    }
  }

  @Test
  void closingASessionKillsASetsidEscapeeTheCgroupHolds() throws Exception {
    LocalRunner r = runner(CapsMechanism.CGROUP_V1);
    ExecOptions opts =
        ExecOptions.builder().resources(ResourceLimits.builder().maxProcesses(20).build()).build();
    long escapee;
    try (ProcessSession s =
        r.start(
            ProcessSpec.pipes(
                    List.of("sh", "-c", "setsid sh -c 'sleep 100 & echo $!'; echo started; cat"))
                .withOptions(opts))) {
      String out = readUntil(s, new long[] {0}, "started");
      escapee = Long.parseLong(out.lines().findFirst().orElseThrow().trim());
      assertThat(ProcessHandle.of(escapee).map(ProcessHandle::isAlive)).contains(true);
    }
    assertThat(LocalRunnerLifecycleTest.gone(escapee)).isTrue();
    assertThat(TreeCgroups.leftBehind()).isEmpty();
  }

  @Test
  void aLeaderThatExitsLeavesNoBackgroundChildBehind() throws Exception {
    LocalRunner r = LocalRunner.create(root.toString());
    try (ProcessSession s =
        r.start(ProcessSpec.pipes(List.of("sh", "-c", "sleep 100 > /dev/null & echo $!")))) {
      long child = Long.parseLong(readUntil(s, new long[] {0}, "\n").trim());
      s.waitFor();
      assertThat(LocalRunnerLifecycleTest.gone(child)).isTrue();
    }
  }

  @Test
  void anIdleSessionHoldsNoDescriptorOfTheCgroupThatTracksItsTree() throws Exception {
    // Every session's tree is tracked (a freezer cgroup here): the files its spawn wrote are
    // closed once the spawn is over, so an idle terminal session keeps its 3 (the pty master, its
    // duplicate for writing, the pidfd), as before every tree was tracked.
    LocalRunner r = LocalRunner.create(root.toString());
    try (ProcessSession warm = r.start(ProcessSpec.terminal(List.of("true")))) {
      warm.waitFor();
    }
    long before = OpenFds.count();
    List<ProcessSession> sessions = new ArrayList<>();
    try {
      for (int i = 0; i < 20; i++) {
        sessions.add(r.start(ProcessSpec.terminal(List.of("cat"))));
      }
      assertThat(OpenFds.count() - before).isEqualTo(3 * 20);
    } finally {
      sessions.forEach(ProcessSession::close);
    }
  }

  @Test
  void fiveHundredConcurrentSessionsLeaveNoFdThreadOrChildAfterClose() throws Exception {
    LocalRunner r = LocalRunner.create(root.toString());
    try (ProcessSession warm = r.start(ProcessSpec.terminal(List.of("true")))) {
      warm.waitFor(); // starts the event loop and binds libc
    }
    long fdsBefore = OpenFds.settled();
    int threadsBefore = LocalRunnerLeakTest.platformThreads();

    List<ProcessSession> sessions = new ArrayList<>();
    try (ExecutorService starters = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<ProcessSession>> started = new ArrayList<>();
      for (int i = 0; i < 500; i++) {
        ProcessSpec spec =
            i % 2 == 0
                ? ProcessSpec.terminal(List.of("cat"))
                : ProcessSpec.pipes(List.of("sleep", "1000"));
        started.add(starters.submit(() -> r.start(spec)));
      }
      for (Future<ProcessSession> f : started) {
        sessions.add(f.get());
      }
    }
    assertThat(r.list()).hasSize(500);
    // Sessions cost the engine no thread each: only the starters' carriers may have come and gone.
    assertThat(LocalRunnerLeakTest.platformThreads()).isLessThan(threadsBefore + 10);
    // Every terminal session answers.
    for (int i = 0; i < 500; i += 50) {
      ProcessSession s = sessions.get(i);
      s.write(("ping" + i + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
      readUntil(s, new long[] {0}, "ping" + i);
    }
    try (ExecutorService closers = Executors.newVirtualThreadPerTaskExecutor()) {
      for (ProcessSession s : sessions) {
        closers.submit(s::close);
      }
    }
    assertThat(r.list()).isEmpty();
    for (ProcessSession s : sessions) {
      assertThat(s.exitValue()).isPresent();
    }
    assertThat(JvmChildren.pids()).isEmpty();
    assertThat(EventLoop.shared().registrationCount()).isZero();
    assertThat(OpenFds.settled()).isEqualTo(fdsBefore);
  }
}
