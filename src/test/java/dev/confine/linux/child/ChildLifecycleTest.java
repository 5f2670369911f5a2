package dev.confine.linux.child;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.testing.HostRequirements;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ChildLifecycleTest {
  /** A guard that records what it was asked, holding processes or not. */
  private static final class RecordingGuard implements TreeGuard {
    final List<String> calls;
    final boolean holds;

    RecordingGuard(List<String> calls, boolean holds) {
      this.calls = calls;
      this.holds = holds;
    }

    @Override
    public Spawner.Spawned spawn(SpawnSpec spec) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean hasProcesses() {
      calls.add("hasProcesses");
      return holds;
    }

    @Override
    public void killTree() {
      calls.add("guard kill");
    }
  }

  @Test
  void theGuardKillsTheTreeBeforeTheGroupIsKilled() {
    List<String> calls = new ArrayList<>();
    ChildLifecycle.killTree(
        new RecordingGuard(calls, false),
        () -> {
          calls.add("group kill");
          return false;
        });
    assertThat(calls).containsExactly("guard kill", "group kill");
  }

  @Test
  void leftoversAreWhatTheGuardHeldOrWhatTheGroupKillReached() {
    for (boolean holds : new boolean[] {false, true}) {
      for (boolean reached : new boolean[] {false, true}) {
        List<String> calls = new ArrayList<>();
        boolean leftovers =
            ChildLifecycle.killLeftovers(
                new RecordingGuard(calls, holds),
                () -> {
                  calls.add("group kill");
                  return reached;
                });
        assertThat(leftovers)
            .as("holds %s, reached %s", holds, reached)
            .isEqualTo(holds || reached);
        assertThat(calls)
            .containsExactlyElementsOf(
                holds
                    ? List.of("hasProcesses", "guard kill", "group kill")
                    : List.of("hasProcesses", "group kill"));
      }
    }
  }

  @Test
  void aBackgroundProcessHoldingTheOutputIsKilledAfterTheDrainAndReported() {
    HostRequirements.require(NativeAccess.availability());
    Execution e =
        Execution.start(
            new SpawnSpec(
                "/bin/sh",
                List.of("sh", "-c", "sleep 30 & echo started"),
                List.of("PATH=/usr/bin:/bin"),
                "/",
                false),
            null,
            1 << 20);
    long drain = TimeUnit.MILLISECONDS.toNanos(100);
    long start = System.nanoTime();
    ChildOutcome done = e.runToCompletion(Long.MAX_VALUE, drain);
    long took = System.nanoTime() - start;

    assertThat(done.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(done.exit().code()).isZero();
    assertThat(done.leftoversKilled()).isTrue();
    assertThat(new String(e.takeStdout(), StandardCharsets.UTF_8)).isEqualTo("started\n");
    // The drain, then at most the settle time after the kill: not the 30 s of the sleep.
    assertThat(took).isLessThan(drain + ChildLifecycle.SETTLE_AFTER_KILL_NANOS + 5_000_000_000L);
  }
}
