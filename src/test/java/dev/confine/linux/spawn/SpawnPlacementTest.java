package dev.confine.linux.spawn;

import static dev.confine.testing.NativeFds.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.EngineException;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.sys.Syscalls;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.JvmChildren;
import dev.confine.testing.NativeFds;
import dev.confine.testing.OpenFds;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link SpawnPlacement#spawnHere}: enter, spawn, leave on the calling thread, and what each
 * failure leaves behind (the child's pipe ends closed, a child spawned before a failed leave killed
 * and reaped, IllegalStateException whenever the thread could not leave).
 */
@Timeout(60)
class SpawnPlacementTest {
  private static final List<String> ENV = List.of("PATH=/usr/bin:/bin");
  private static final SpawnSpec OK = new SpawnSpec("/bin/true", List.of("true"), ENV, "/", false);
  private static final SpawnSpec MISSING =
      new SpawnSpec("/nonexistent/program", List.of("x"), ENV, "/", false);

  /** Records its calls; fails enter or leave when told to. */
  private static final class Scripted implements SpawnPlacement {
    final List<String> calls = new ArrayList<>();
    boolean failEnter;
    boolean failLeave;

    @Override
    public void enter(int tid) throws IOException {
      calls.add("enter " + (tid == Syscalls.gettid()));
      if (failEnter) {
        throw new IOException("enter refused");
      }
    }

    @Override
    public void leave(int tid) throws IOException {
      calls.add("leave " + (tid == Syscalls.gettid()));
      if (failLeave) {
        throw new IOException("leave refused");
      }
    }
  }

  @BeforeEach
  void engine() {
    HostRequirements.require(NativeAccess.availability());
  }

  private static void reap(Spawner.Spawned s) {
    assertThat(NativeFds.awaitPoll(s.pidfd(), LibC.POLLIN(), WAIT)).isNotZero();
    Spawner.abandon(s, true); // kills nothing that is gone; reaps and closes
  }

  @Test
  void theNonePlacementDoesNothing() {
    SpawnPlacement none = SpawnPlacement.NONE;
    assertThat(none.movesThread()).isFalse();
    assertThat(none.cloneIntoCgroup()).isEqualTo(-1);
    assertThat(none.adoptsAtOnce()).isFalse();
  }

  @Test
  void theThreadEntersSpawnsAndLeavesAroundTheSpawn() {
    Scripted p = new Scripted();
    long fds = OpenFds.count();
    Spawner.Spawned s = SpawnPlacement.spawnHere(p, OK, null);
    reap(s);
    assertThat(p.calls).containsExactly("enter true", "leave true");
    assertThat(OpenFds.count()).isEqualTo(fds);
  }

  @Test
  void aRefusedEnterSpawnsNothingAndClosesTheChildEnds() throws IOException {
    Scripted p = new Scripted();
    p.failEnter = true;
    Spawner.Pipes pipes = Spawner.Pipes.open(true);
    String out = NativeFds.target(pipes.stdoutRead());
    Set<Integer> children = JvmChildren.pids();
    try {
      assertThatThrownBy(() -> SpawnPlacement.spawnHere(p, OK, pipes))
          .isInstanceOf(EngineException.class)
          .hasRootCauseMessage("enter refused");
      assertThat(p.calls).containsExactly("enter true", "leave true");
      assertThat(NativeFds.openAs(out)).containsExactly(pipes.stdoutRead());
      assertThat(JvmChildren.pids()).isSubsetOf(children);
    } finally {
      pipes.closeParentEnds();
    }
  }

  @Test
  void aThreadThatCanLeaveNeitherAfterARefusedEnterIsReportedStuck() {
    Scripted p = new Scripted();
    p.failEnter = true;
    p.failLeave = true;
    long fds = OpenFds.count();
    assertThatThrownBy(() -> SpawnPlacement.spawnHere(p, OK, null))
        .isInstanceOf(IllegalStateException.class);
    assertThat(OpenFds.count()).isEqualTo(fds);
  }

  @Test
  void aFailedSpawnStillLeaves() {
    Scripted p = new Scripted();
    assertThatThrownBy(() -> SpawnPlacement.spawnHere(p, MISSING, null))
        .isInstanceOfSatisfying(
            ErrnoException.class, e -> assertThat(e.errno()).isEqualTo(LibC.ENOENT()));
    assertThat(p.calls).containsExactly("enter true", "leave true");
  }

  @Test
  void aChildSpawnedBeforeAFailedLeaveIsKilledReapedAndClosed() throws IOException {
    Scripted p = new Scripted();
    p.failLeave = true;
    SpawnSpec sleeper = new SpawnSpec("/bin/sleep", List.of("sleep", "600"), ENV, "/", true);
    long fds = OpenFds.count();
    Set<Integer> children = JvmChildren.pids();
    assertThatThrownBy(() -> SpawnPlacement.spawnHere(p, sleeper, null))
        .isInstanceOf(IllegalStateException.class)
        .hasRootCauseMessage("leave refused");
    assertThat(JvmChildren.pids()).as("no child, not even a zombie").isSubsetOf(children);
    assertThat(OpenFds.count()).isEqualTo(fds);
  }

  @Test
  void aThreadThatCannotLeaveAfterAFailedSpawnIsReportedStuck() {
    Scripted p = new Scripted();
    p.failLeave = true;
    assertThatThrownBy(() -> SpawnPlacement.spawnHere(p, MISSING, null))
        .isInstanceOf(IllegalStateException.class)
        .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
  }
}
