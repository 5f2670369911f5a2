package dev.confine.linux.tree;

import static dev.confine.testing.NativeFds.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.siginfo_t;
import dev.confine.linux.spawn.ExitStatus;
import dev.confine.linux.spawn.Reaping;
import dev.confine.linux.spawn.SpawnPlacement;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.sys.Syscalls;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.NativeFds;
import dev.confine.testing.OpenFds;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link TreeGuard#NONE} and the defaults every guard inherits: the process group is all there is,
 * nothing is measured, and a tree held this way never counts as holding every process.
 */
@Timeout(60)
class TreeGuardTest {
  private static final List<String> ENV = List.of("PATH=/usr/bin:/bin");

  /** A guard that only spawns: everything else is the interface's default. */
  private static final TreeGuard DEFAULTS = spec -> null;

  @Test
  void theDefaultsHoldNothingMeasureNothingAndPlaceNothing() {
    for (TreeGuard g : List.of(TreeGuard.NONE, DEFAULTS)) {
      assertThat(g.placement()).isSameAs(SpawnPlacement.NONE);
      assertThat(g.hasProcesses()).isFalse();
      assertThat(g.exceeded()).isNull();
      assertThat(g.unenforceable()).isNull();
      assertThat(g.holdsEveryProcess()).as("a tree held by its process group alone").isFalse();
      assertThat(g.usage()).isEqualTo(TreeUsage.NOT_MEASURED);
      g.started(1);
      g.killTree();
      g.close();
      g.close();
      assertThat(g.hasProcesses()).isFalse();
    }
    assertThat(TreeUsage.NOT_MEASURED).isEqualTo(new TreeUsage(-1, -1, -1, false));
  }

  @Test
  void noneSpawnsWithTheSpawnerAndKillTreeLeavesTheChildAlone() throws Exception {
    HostRequirements.require(NativeAccess.availability());
    long fds = OpenFds.count();
    Spawner.Spawned s =
        TreeGuard.NONE.spawn(
            new SpawnSpec("/bin/sh", List.of("sh", "-c", "echo $$; exec cat"), ENV, "/", true));
    try {
      String out = new String(NativeFds.readOnce(s.stdoutFd(), 64), StandardCharsets.US_ASCII);
      assertThat(out.strip()).isEqualTo(String.valueOf(s.pid()));
      // A child of this JVM in its own session, as Spawner makes it.
      String stat = Files.readString(Path.of("/proc/" + s.pid() + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      assertThat(f[1]).isEqualTo(String.valueOf(ProcessHandle.current().pid()));
      assertThat(f[3]).isEqualTo(String.valueOf(s.pid()));
      // NONE holds nothing beyond the group: its killTree kills nothing.
      TreeGuard.NONE.started(s.pid());
      TreeGuard.NONE.killTree();
      TreeGuard.NONE.close();
      assertThat(NativeFds.pollNow(s.pidfd(), LibC.POLLIN())).as("still running").isZero();
      Syscalls.close(s.stdinFd());
      assertThat(NativeFds.readToEnd(s.stdoutFd(), WAIT)).isEmpty();
      assertThat(NativeFds.awaitPoll(s.pidfd(), LibC.POLLIN(), WAIT)).isNotZero();
      try (Arena a = Arena.ofConfined()) {
        MemorySegment info = a.allocate(siginfo_t.layout());
        assertThat(Syscalls.waitid(LibC.P_PIDFD(), s.pidfd(), info, LibC.WEXITED())).isZero();
        assertThat(Reaping.status(info)).isEqualTo(new ExitStatus(0, 0));
      }
    } finally {
      if (NativeFds.isOpen(s.pidfd()) && NativeFds.pollNow(s.pidfd(), LibC.POLLIN()) == 0) {
        Spawner.abandon(s, false);
      } else {
        Syscalls.close(s.pidfd());
      }
      NativeFds.closeAll(s.stdoutFd(), s.stderrFd());
    }
    assertThat(OpenFds.count()).isEqualTo(fds);
  }

  @Test
  void noneReportsASpawnFailureAsTheSpawnerDoes() {
    HostRequirements.require(NativeAccess.availability());
    assertThatThrownBy(
            () ->
                TreeGuard.NONE.spawn(
                    new SpawnSpec("/nonexistent/x", List.of("x"), ENV, "/", false)))
        .isInstanceOfSatisfying(
            ErrnoException.class, e -> assertThat(e.errno()).isEqualTo(LibC.ENOENT()));
  }
}
