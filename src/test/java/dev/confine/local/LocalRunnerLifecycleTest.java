package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.Engine;
import dev.confine.testing.Thrown;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Timeouts, interrupts and leftovers: when exec returns, nothing it started runs. */
@Timeout(60)
class LocalRunnerLifecycleTest {
  @TempDir Path root;

  private LocalRunner runner() {
    return LocalRunner.create(root.toString());
  }

  /**
   * Waits up to 2 s for {@code pid} to be dead: gone, or a zombie (a killed orphan waits for init
   * to reap it, which on some hosts takes seconds; ProcessHandle counts a zombie as alive).
   */
  static boolean gone(long pid) {
    long deadline = System.nanoTime() + 2_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (!alive(pid)) {
        return true;
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  private static boolean alive(long pid) {
    try {
      String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + pid + "/stat"));
      return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
    } catch (java.io.IOException gone) {
      return false;
    }
  }

  private static long firstPid(ExecResult r) {
    return Long.parseLong(r.stdoutText().lines().findFirst().orElseThrow().trim());
  }

  @Test
  void timeoutKillsTheWholeGroupAndReturnsThePartialOutput() {
    long start = System.nanoTime();
    SandboxException e =
        Thrown.sandbox(
            () ->
                runner()
                    .exec(
                        "sh",
                        List.of("-c", "sleep 100 & echo $!; echo started; wait"),
                        ExecOptions.builder().timeout(Duration.ofMillis(300)).build()));
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
    ExecResult partial = e.partialResult().orElseThrow();
    assertThat(partial.stdoutText()).contains("started");
    assertThat(partial.signal()).isEqualTo(9);
    assertThat(elapsedMs).isLessThan(2_000);
    assertThat(gone(firstPid(partial))).isTrue();
  }

  @Test
  void interruptCancelsKillsTheGroupAndKeepsTheInterruptStatus() throws Exception {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
    CountDownLatch running = new CountDownLatch(1);
    Thread t =
        Thread.ofPlatform()
            .start(
                () -> {
                  running.countDown();
                  try {
                    runner().exec("sh", List.of("-c", "sleep 100 & echo $!; wait"), null);
                  } catch (Throwable ex) {
                    failure.set(ex);
                  }
                  stillInterrupted.set(Thread.currentThread().isInterrupted());
                });
    running.await();
    Thread.sleep(300);
    t.interrupt();
    t.join(5_000);
    assertThat(t.isAlive()).isFalse();
    assertThat(failure.get()).isInstanceOf(SandboxException.class);
    SandboxException e = (SandboxException) failure.get();
    assertThat(e.kind()).isEqualTo(Kind.ABORTED);
    assertThat(stillInterrupted.get()).isTrue();
    assertThat(gone(firstPid(e.partialResult().orElseThrow()))).isTrue();
  }

  @Test
  void alreadyInterruptedCallerIsAbortedPromptly() {
    Thread.currentThread().interrupt();
    try {
      SandboxException e = Thrown.sandbox(() -> runner().exec("sleep", List.of("10"), null));
      assertThat(e.kind()).isEqualTo(Kind.ABORTED);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void aBackgroundChildHoldingStdoutGetsTheDrainThenIsKilled() {
    long start = System.nanoTime();
    ExecResult r = runner().exec("sh", List.of("-c", "sleep 60 & echo $!"), null);
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    assertThat(r.exitCode()).isZero();
    assertThat(r.leftoversKilled()).isTrue();
    assertThat(elapsedMs).isBetween(1_900L, 4_000L);
    assertThat(gone(firstPid(r))).isTrue();
  }

  @Test
  void theWallTimeIsTheWholeCallTheDrainIncluded() {
    long start = System.nanoTime();
    ExecResult r = runner().exec("sh", List.of("-c", "sleep 60 & echo $!"), null);
    Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
    assertThat(r.leftoversKilled()).isTrue();
    assertThat(r.wallTime()).isGreaterThanOrEqualTo(Engine.DRAIN).isLessThanOrEqualTo(elapsed);
    // The child's own time ends at its reaping, before the drain began.
    assertThat(r.childTime()).isPositive().isLessThanOrEqualTo(r.wallTime().minus(Engine.DRAIN));
  }

  @Test
  void withoutLeftoversTheWallTimeCoversTheChildTime() {
    ExecResult r = runner().exec("sh", List.of("-c", "sleep 0.2"), null);
    assertThat(r.leftoversKilled()).isFalse();
    assertThat(r.childTime()).isGreaterThanOrEqualTo(Duration.ofMillis(200));
    assertThat(r.wallTime()).isGreaterThanOrEqualTo(r.childTime());
  }

  @Test
  void aDetachedBackgroundChildIsKilledWithoutWaitingForTheDrain() {
    long start = System.nanoTime();
    ExecResult r =
        runner().exec("sh", List.of("-c", "sleep 60 >/dev/null 2>&1 </dev/null & echo $!"), null);
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    assertThat(r.leftoversKilled()).isTrue();
    assertThat(elapsedMs).isLessThan(1_500);
    assertThat(gone(firstPid(r))).isTrue();
  }

  @Test
  void aDoubleForkedGrandchildIsGoneWhenExecReturns() {
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of("-c", "(sleep 60 >/dev/null 2>&1 & echo $!) ; echo parent-done"),
                null);
    assertThat(r.stdoutText()).contains("parent-done");
    assertThat(gone(firstPid(r))).isTrue();
  }

  @Test
  void aProgramThatLeavesNothingBehindIsNotFlagged() {
    assertThat(runner().exec("true", List.of(), null).leftoversKilled()).isFalse();
  }
}
