package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.confinement.Landlock;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.OpenFds;
import dev.confine.testing.Thrown;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A confined exec from a platform thread hands its spawn to the confinement thread and sleeps on
 * the child's pipes without waiting for the spawn (the pid is picked up when the child writes,
 * closes its outputs or exits, or 10 ms in): everything an exec promises must hold on that path —
 * stdin written before the child exists, timeouts and interrupts of a child that never writes, an
 * exit seen while a background process holds the pipes, spawn failures, and no fd left behind.
 */
@Tag("confinement")
@Timeout(60)
class ConfinedExecLifecycleTest {
  @TempDir Path root;

  @BeforeEach
  void needsLandlock() {
    HostRequirements.require(Landlock.availability());
  }

  private ConfinedRunner runner() {
    return ConfinedRunner.builder(root.toString()).rootless(true).build();
  }

  private static ExecOptions timeout(Duration d) {
    return ExecOptions.builder().timeout(d).build();
  }

  @Test
  void stdinWrittenBeforeTheChildExistsArrivesWhole() {
    byte[] data = new byte[1 << 20];
    new Random(7).nextBytes(data);
    ExecResult r =
        runner()
            .exec(
                "cat",
                List.of(),
                ExecOptions.builder().stdin(data).timeout(Duration.ofSeconds(30)).build());
    assertThat(r.exitCode()).isZero();
    assertThat(r.stdout()).isEqualTo(data);
  }

  @Test
  void exitCodeAndBothStreams() {
    ExecResult r =
        runner()
            .exec("sh", List.of("-c", "echo out; echo err >&2; exit 7"), timeout(ofSeconds(30)));
    assertThat(r.exitCode()).isEqualTo(7);
    assertThat(r.stdoutText()).isEqualTo("out\n");
    assertThat(r.stderrText()).isEqualTo("err\n");
  }

  @Test
  void aSilentChildTimesOutPromptly() {
    long start = System.nanoTime();
    SandboxException e =
        Thrown.sandbox(() -> runner().exec("sleep", List.of("30"), timeout(ms(300))));
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
    assertThat(elapsedMs).isBetween(250L, 2_000L);
  }

  @Test
  void aSilentChildIsAbortedByAnInterrupt() throws Exception {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicBoolean stillInterrupted = new AtomicBoolean();
    Thread t =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    runner().exec("sleep", List.of("30"), timeout(ofSeconds(30)));
                  } catch (Throwable x) {
                    failure.set(x);
                  }
                  stillInterrupted.set(Thread.currentThread().isInterrupted());
                });
    Thread.sleep(300);
    long start = System.nanoTime();
    t.interrupt();
    t.join(5_000);
    assertThat(t.isAlive()).isFalse();
    assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(2_000);
    assertThat(failure.get()).isInstanceOf(SandboxException.class);
    assertThat(((SandboxException) failure.get()).kind()).isEqualTo(Kind.ABORTED);
    assertThat(stillInterrupted.get()).isTrue();
  }

  @Test
  void aChildThatClosesItsOutputsAndGoesOnIsWaitedFor() {
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of("-c", "exec >/dev/null 2>&1; sleep 0.3; exit 3"),
                timeout(ofSeconds(30)));
    assertThat(r.exitCode()).isEqualTo(3);
    assertThat(r.wallTime()).isGreaterThanOrEqualTo(ms(300));
  }

  @Test
  void anExitIsSeenWhileABackgroundProcessHoldsThePipes() {
    long start = System.nanoTime();
    ExecResult r = runner().exec("sh", List.of("-c", "sleep 60 & exit 5"), timeout(ofSeconds(30)));
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    assertThat(r.exitCode()).isEqualTo(5);
    assertThat(r.leftoversKilled()).isTrue();
    assertThat(elapsedMs).isBetween(1_900L, 4_000L); // the 2 s drain
    // Reaped through the pidfd at once, not when the drain ended.
    assertThat(r.childTime()).isLessThan(ms(500));
    assertThat(r.wallTime()).isGreaterThanOrEqualTo(ms(2_000));
  }

  @Test
  void aSpawnThatFailsOnTheConfinementThreadIsClassifiedAndLeavesNoFd() throws IOException {
    Path garbage = root.resolve("garbage");
    Files.write(garbage, "\u007fELF not really".getBytes(StandardCharsets.ISO_8859_1));
    Files.setPosixFilePermissions(garbage, PosixFilePermissions.fromString("rwxr-xr-x"));
    ConfinedRunner runner = runner();
    SandboxException first = Thrown.sandbox(() -> runner.exec(garbage.toString(), List.of(), null));
    assertThat(first.kind()).isEqualTo(Kind.INTERNAL);
    assertThat(first.getMessage()).contains("posix_spawn").contains("Exec format error");
    long fds = OpenFds.settled();
    for (int i = 0; i < 50; i++) {
      Thrown.sandbox(() -> runner.exec(garbage.toString(), List.of(), null));
    }
    assertThat(OpenFds.settled()).isEqualTo(fds);
  }

  @Test
  void virtualThreadsSpawnThroughTheLoopAsBefore() throws Exception {
    ConfinedRunner runner = runner();
    try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
      ExecResult r =
          threads
              .submit(
                  () -> runner.exec("sh", List.of("-c", "echo vt; exit 4"), timeout(ofSeconds(30))))
              .get();
      assertThat(r.exitCode()).isEqualTo(4);
      assertThat(r.stdoutText()).isEqualTo("vt\n");
    }
  }

  @Test
  void manyExecsLeaveNoFdBehind() {
    ConfinedRunner runner = runner();
    runner.exec("true", List.of(), null); // the confinement thread and its buffers exist
    long fds = OpenFds.settled();
    for (int i = 0; i < 200; i++) {
      ExecResult r =
          runner.exec(
              "sh", List.of("-c", "echo " + i + "; exit " + (i % 3)), timeout(ofSeconds(30)));
      assertThat(r.exitCode()).isEqualTo(i % 3);
      assertThat(r.stdoutText()).isEqualTo(i + "\n");
    }
    Thrown.sandbox(() -> runner.exec("sleep", List.of("30"), timeout(ms(50))));
    assertThat(OpenFds.settled()).isEqualTo(fds);
  }

  private static Duration ms(long n) {
    return Duration.ofMillis(n);
  }

  private static Duration ofSeconds(long n) {
    return Duration.ofSeconds(n);
  }
}
