package dev.confine.linux.child;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.spawn.PendingSpawn;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.EngineException;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.OpenFds;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HandOffTest {
  private static final SpawnSpec SPEC =
      new SpawnSpec("/bin/true", List.of("true"), List.of(), "/", false);

  /** A guard whose spawns are scripted: a poll gives the next outcome, null when none is left. */
  private static final class ScriptedGuard implements TreeGuard.HandedOff {
    final Deque<Object> outcomes = new ArrayDeque<>();
    RuntimeException submitFailure;
    Spawner.Pipes submitted;
    boolean closed;

    @Override
    public PendingSpawn submit(SpawnSpec spec, Spawner.Pipes pipes) {
      if (submitFailure != null) {
        throw submitFailure;
      }
      submitted = pipes;
      return new PendingSpawn() {
        @Override
        public Spawner.Spawned poll() {
          Object next = outcomes.poll();
          if (next instanceof RuntimeException e) {
            throw e;
          }
          return (Spawner.Spawned) next;
        }

        @Override
        public Spawner.Spawned await() {
          Spawner.Spawned s;
          while ((s = poll()) == null) {
            Thread.onSpinWait();
          }
          return s;
        }
      };
    }

    @Override
    public Spawner.Spawned spawn(SpawnSpec spec) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  @BeforeEach
  void engine() {
    HostRequirements.require(NativeAccess.availability());
  }

  @Test
  void onlyAPlatformCallerWaitingForAChildWithoutTerminalHandsOff() throws Exception {
    ScriptedGuard handedOff = new ScriptedGuard();
    assertThat(SpawnStrategy.of(SPEC, handedOff, true)).isEqualTo(SpawnStrategy.HANDED_OFF);
    assertThat(SpawnStrategy.of(SPEC.withStdio(false, "/dev/pts/0"), handedOff, true))
        .isEqualTo(SpawnStrategy.CALLER_POLLS);
    assertThat(SpawnStrategy.of(SPEC, handedOff, false)).isEqualTo(SpawnStrategy.LOOP_WATCHES);
    assertThat(SpawnStrategy.of(SPEC, TreeGuard.NONE, true)).isEqualTo(SpawnStrategy.CALLER_POLLS);
    SpawnStrategy[] onVirtual = new SpawnStrategy[1];
    Thread.ofVirtual().start(() -> onVirtual[0] = SpawnStrategy.of(SPEC, handedOff, true)).join();
    assertThat(onVirtual[0]).isEqualTo(SpawnStrategy.LOOP_WATCHES);
  }

  @Test
  void theOutcomeIsTakenOnceItIsThere() {
    ScriptedGuard guard = new ScriptedGuard();
    Spawner.Spawned child = new Spawner.Spawned(42, -1, -1, -1, -1);
    HandOff h = HandOff.submit(SPEC, guard);
    try {
      assertThat(h.pending()).isTrue();
      assertThat(h.take(false)).isNull(); // nothing scripted yet: still running
      guard.outcomes.add(child);
      assertThat(h.take(false)).isSameAs(child);
      assertThat(h.pending()).isFalse();
      assertThat(h.adoptBy() - System.nanoTime()).isLessThan(1_000_000_000L);
    } finally {
      h.pipes().closeChildEnds();
      h.pipes().closeParentEnds();
    }
  }

  @Test
  void aFailedSpawnIsThrownEveryTimeAndKnownAsTheFailure() {
    ScriptedGuard guard = new ScriptedGuard();
    RuntimeException failure = new ErrnoException("posix_spawn", 2);
    guard.outcomes.add(failure);
    HandOff h = HandOff.submit(SPEC, guard);
    try {
      assertThatThrownBy(() -> h.take(true)).isSameAs(failure);
      assertThat(h.pending()).isFalse();
      assertThatThrownBy(() -> h.take(false)).isSameAs(failure);
      assertThat(h.threw(failure)).isTrue();
      assertThat(h.threw(new ErrnoException("posix_spawn", 2))).isFalse();
    } finally {
      h.pipes().closeChildEnds();
      h.pipes().closeParentEnds();
    }
  }

  @Test
  void aRefusedSubmitClosesThePipesAndTheGuard() {
    ScriptedGuard guard = new ScriptedGuard();
    guard.submitFailure = new EngineException("no confinement thread", null);
    long before = OpenFds.count();
    assertThatThrownBy(() -> HandOff.submit(SPEC, guard)).isSameAs(guard.submitFailure);
    assertThat(guard.closed).isTrue();
    assertThat(OpenFds.count()).isEqualTo(before);
  }
}
