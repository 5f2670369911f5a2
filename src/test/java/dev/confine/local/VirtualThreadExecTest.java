package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Execs from virtual threads: their children are watched by the shared event loop (a platform
 * caller polls its own), with the same results, timeouts and cancellation.
 */
@Timeout(60)
class VirtualThreadExecTest {
  @TempDir Path root;

  private static <T> T onVirtualThread(Callable<T> task) throws Exception {
    AtomicReference<T> out = new AtomicReference<>();
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread.ofVirtual()
        .start(
            () -> {
              try {
                out.set(task.call());
              } catch (Throwable t) {
                thrown.set(t);
              }
            })
        .join();
    if (thrown.get() instanceof Exception e) {
      throw e;
    }
    if (thrown.get() instanceof Error e) {
      throw e;
    }
    return out.get();
  }

  @Test
  void outputExitCodeAndStdinTravelThroughTheLoop() throws Exception {
    LocalRunner runner = LocalRunner.create(root.toString());
    byte[] input = new byte[300_000];
    java.util.Arrays.fill(input, (byte) 'x');
    ExecResult r =
        onVirtualThread(
            () ->
                runner.exec(
                    "sh",
                    List.of("-c", "wc -c; echo err >&2; exit 4"),
                    ExecOptions.builder().stdin(input).build()));
    assertThat(r.exitCode()).isEqualTo(4);
    assertThat(r.stdoutText().trim()).isEqualTo("300000");
    assertThat(new String(r.stderr(), StandardCharsets.UTF_8)).isEqualTo("err\n");
  }

  @Test
  void aTimeoutKillsTheGroup() throws Exception {
    LocalRunner runner = LocalRunner.create(root.toString());
    SandboxException e =
        onVirtualThread(
            () -> {
              try {
                runner.exec(
                    "sleep",
                    List.of("30"),
                    ExecOptions.builder().timeout(Duration.ofMillis(200)).build());
                return null;
              } catch (SandboxException x) {
                return x;
              }
            });
    assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
    assertThat(e.partialResult().orElseThrow().signal()).isEqualTo(9);
  }

  @Test
  void anInterruptCancels() throws Exception {
    LocalRunner runner = LocalRunner.create(root.toString());
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch started = new CountDownLatch(1);
    Thread t =
        Thread.ofVirtual()
            .start(
                () -> {
                  started.countDown();
                  try {
                    runner.exec("sleep", List.of("30"), null);
                  } catch (Throwable x) {
                    failure.set(x);
                  }
                });
    started.await();
    Thread.sleep(300);
    t.interrupt();
    t.join(5_000);
    assertThat(t.isAlive()).isFalse();
    assertThat(((SandboxException) failure.get()).kind()).isEqualTo(Kind.ABORTED);
  }
}
