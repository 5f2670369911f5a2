package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.SandboxException;
import dev.confine.linux.loop.EventLoop;
import dev.confine.testing.JvmChildren;
import dev.confine.testing.OpenFds;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Thousands of execs of every outcome leave no fd, child process, thread or registration. */
class LocalRunnerLeakTest {
  private static final int EXECS = 10_000;

  @TempDir Path root;

  enum Outcome {
    SUCCESS,
    EXIT_CODE,
    NOT_FOUND,
    TIMEOUT,
    INTERRUPTED
  }

  @Test
  @Timeout(300)
  void tenThousandMixedExecsLeaveNothingBehind() throws Exception {
    LocalRunner runner = LocalRunner.create(root.toString());
    runner.exec("true", List.of(), null); // binds libc
    EventLoop.shared(); // its epoll fd and eventfd stay for the JVM's life: opened before counting
    ScheduledExecutorService interrupter = Executors.newSingleThreadScheduledExecutor();
    interrupter.schedule(() -> {}, 0, TimeUnit.MILLISECONDS).get();

    long fdsBefore = OpenFds.settled();
    int threadsBefore = platformThreads();
    Map<Outcome, Integer> seen = new EnumMap<>(Outcome.class);

    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<Outcome>> results = new ArrayList<>(EXECS);
    for (int i = 0; i < EXECS; i++) {
      Outcome planned = Outcome.values()[i % 10 < 5 ? 0 : i % 10 - 5 < 4 ? i % 10 - 5 : 4];
      results.add(pool.submit(() -> runOne(runner, planned, interrupter)));
    }
    for (Future<Outcome> f : results) {
      seen.merge(f.get(), 1, Integer::sum);
    }
    pool.shutdown();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    interrupter.shutdown();
    assertThat(interrupter.awaitTermination(30, TimeUnit.SECONDS)).isTrue();

    assertThat(seen.keySet()).containsExactlyInAnyOrder(Outcome.values());
    assertThat(seen.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(EXECS);
    assertThat(JvmChildren.pids()).isEmpty();
    assertThat(EventLoop.shared().registrationCount()).isZero();
    assertThat(OpenFds.settled()).isEqualTo(fdsBefore);
    assertThat(settledPlatformThreads(threadsBefore)).isLessThanOrEqualTo(threadsBefore);
  }

  private static Outcome runOne(
      LocalRunner runner, Outcome planned, ScheduledExecutorService interrupter) {
    try {
      switch (planned) {
        case SUCCESS -> runner.exec("true", List.of(), null);
        case EXIT_CODE -> {
          if (runner.exec("sh", List.of("-c", "exit 3"), null).exitCode() != 3) {
            throw new AssertionError("exit code lost");
          }
        }
        case NOT_FOUND -> runner.exec("no-such-program-confine", List.of(), null);
        case TIMEOUT ->
            runner.exec(
                "sleep", List.of("5"), ExecOptions.builder().timeout(Duration.ofMillis(5)).build());
        case INTERRUPTED -> {
          Thread me = Thread.currentThread();
          var pending = interrupter.schedule(me::interrupt, 5, TimeUnit.MILLISECONDS);
          try {
            runner.exec("sleep", List.of("5"), null);
          } finally {
            pending.cancel(false);
            Thread.interrupted();
          }
        }
      }
      return planned == Outcome.NOT_FOUND ? fail(planned) : planned;
    } catch (SandboxException e) {
      Outcome got =
          switch (e.kind()) {
            case NOT_FOUND -> Outcome.NOT_FOUND;
            case TIMEOUT -> Outcome.TIMEOUT;
            case ABORTED -> Outcome.INTERRUPTED;
            default -> throw e;
          };
      Thread.interrupted();
      return got == planned ? got : fail(planned);
    }
  }

  private static Outcome fail(Outcome planned) {
    throw new AssertionError("unexpected outcome for " + planned);
  }

  static int platformThreads() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }

  static int settledPlatformThreads(int expected) throws InterruptedException {
    int n = platformThreads();
    for (int i = 0; i < 200 && n != expected; i++) {
      Thread.sleep(10);
      n = platformThreads();
    }
    return n;
  }
}
