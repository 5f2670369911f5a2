package dev.confine.local;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.session.ProcessSpec;
import dev.confine.testing.OpenFds;
import dev.confine.testing.Thrown;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Streamed output ({@code stdoutStream}, {@code stderrStream}): the bytes reach the stream while
 * the child runs, in its order, capped, with a slow stream holding the child back as a pipe would,
 * the timeout holding all the same, a failed stream ending the child as a broken pipe does, and
 * nothing left behind.
 */
@Timeout(60)
class StreamedOutputTest {
  @TempDir Path root;

  private Runner runner() {
    return LocalRunner.create(root.toString());
  }

  /** A stream that keeps what it got and counts down when it has seen {@code awaited}. */
  static final class Recording extends OutputStream {
    private final ByteArrayOutputStream got = new ByteArrayOutputStream();
    private final String awaited;
    final CountDownLatch seen = new CountDownLatch(1);

    Recording(String awaited) {
      this.awaited = awaited;
    }

    @Override
    public synchronized void write(int b) {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
      got.write(b, off, len);
      if (awaited != null && got.toString(UTF_8).contains(awaited)) {
        seen.countDown();
      }
    }

    synchronized byte[] bytes() {
      return got.toByteArray();
    }

    String text() {
      return new String(bytes(), UTF_8);
    }
  }

  /** A stream whose first write blocks until {@link #release}. */
  static final class Stuck extends OutputStream {
    final CountDownLatch writing = new CountDownLatch(1);
    final CountDownLatch released = new CountDownLatch(1);
    long bytes;

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      writing.countDown();
      try {
        released.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      synchronized (this) {
        bytes += len;
      }
    }

    synchronized long bytes() {
      return bytes;
    }
  }

  private static ExecOptions streams(OutputStream out, OutputStream err) {
    return ExecOptions.builder().stdoutStream(out).stderrStream(err).build();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void theFirstBytesArriveWhileTheChildStillRuns(boolean virtual) throws Exception {
    Path gate = root.resolve("gate");
    Files.createFile(gate);
    Recording out = new Recording("first\n");
    // The child prints, then waits until the test has seen the line (no timing involved: without
    // streaming, the line would arrive only at the end, which never comes before the gate opens).
    String script = "echo first; while [ -e gate ]; do sleep 0.01; done; echo second";
    ExecutorService pool =
        virtual ? Executors.newVirtualThreadPerTaskExecutor() : Executors.newCachedThreadPool();
    try {
      Future<ExecResult> exec =
          pool.submit(() -> runner().exec("sh", List.of("-c", script), streams(out, null)));
      assertThat(out.seen.await(20, TimeUnit.SECONDS)).as("first line while running").isTrue();
      assertThat(exec.isDone()).isFalse();
      Files.delete(gate);
      ExecResult r = exec.get(20, TimeUnit.SECONDS);
      assertThat(r.exitCode()).isZero();
      assertThat(out.text()).isEqualTo("first\nsecond\n");
      assertThat(r.stdout()).isEmpty(); // streamed, not kept
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void eachStreamGetsItsOwnBytesInOrderAndTheResultKeepsNone() {
    Recording out = new Recording(null);
    Recording err = new Recording(null);
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of("-c", "for i in $(seq 1 2000); do echo o$i; echo e$i >&2; done; exit 5"),
                streams(out, err));
    assertThat(r.exitCode()).isEqualTo(5);
    StringBuilder o = new StringBuilder();
    StringBuilder e = new StringBuilder();
    for (int i = 1; i <= 2000; i++) {
      o.append("o").append(i).append('\n');
      e.append("e").append(i).append('\n');
    }
    assertThat(out.text()).isEqualTo(o.toString());
    assertThat(err.text()).isEqualTo(e.toString());
    assertThat(r.stdout()).isEmpty();
    assertThat(r.stderr()).isEmpty();
    assertThat(r.stdoutTruncated()).isFalse();
  }

  @Test
  void onlyOneStreamedTheOtherIsKept() {
    Recording err = new Recording(null);
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of("-c", "echo kept; echo streamed >&2"),
                ExecOptions.builder().stderrStream(err).build());
    assertThat(r.stdoutText()).isEqualTo("kept\n");
    assertThat(r.stderr()).isEmpty();
    assertThat(err.text()).isEqualTo("streamed\n");
  }

  @Test
  void theCapCutsTheStreamAndTheChildGoesOn() {
    Recording out = new Recording(null);
    Recording err = new Recording(null);
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of("-c", "head -c 1048576 /dev/zero; echo done >&2"),
                ExecOptions.builder()
                    .stdoutStream(out)
                    .stderrStream(err)
                    .resources(ResourceLimits.builder().maxOutputBytes(10).build())
                    .build());
    assertThat(r.exitCode()).isZero();
    assertThat(out.bytes()).hasSize(10);
    assertThat(r.stdoutTruncated()).isTrue();
    assertThat(err.text()).isEqualTo("done\n");
    assertThat(r.stderrTruncated()).isFalse();
  }

  @Test
  void aSlowStreamHoldsTheChildBackAsAPipeWould() throws Exception {
    Stuck out = new Stuck();
    Path marker = root.resolve("wrote-all");
    ExecutorService pool = Executors.newCachedThreadPool();
    try {
      Future<ExecResult> exec =
          pool.submit(
              () ->
                  runner()
                      .exec(
                          "sh",
                          List.of("-c", "head -c 4194304 /dev/zero; touch wrote-all"),
                          streams(out, null)));
      assertThat(out.writing.await(20, TimeUnit.SECONDS)).isTrue();
      Thread.sleep(500);
      // 4 MiB cannot fit in the pipe and the pump's one chunk: the child is still writing.
      assertThat(marker).doesNotExist();
      assertThat(exec.isDone()).isFalse();
      out.released.countDown();
      ExecResult r = exec.get(20, TimeUnit.SECONDS);
      assertThat(r.exitCode()).isZero();
      assertThat(out.bytes()).isEqualTo(4L << 20);
      assertThat(marker).exists();
    } finally {
      out.released.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void theTimeoutHoldsWhileTheStreamBlocks() {
    Stuck out = new Stuck();
    try {
      long start = System.nanoTime();
      SandboxException e =
          Thrown.sandbox(
              () ->
                  runner()
                      .exec(
                          "sh",
                          List.of("-c", "while :; do echo busy; done"),
                          ExecOptions.builder()
                              .stdoutStream(out)
                              .timeout(Duration.ofMillis(500))
                              .build()));
      assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
      // The timeout, the drain's end and the one second the exec gives a stuck stream's last write.
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(8));
    } finally {
      out.released.countDown();
    }
  }

  @Test
  void aStreamThatFailsEndsTheChildAsABrokenPipeWould() {
    OutputStream broken =
        new OutputStream() {
          @Override
          public void write(int b) throws IOException {
            throw new IOException("Broken pipe");
          }

          @Override
          public void write(byte[] b, int off, int len) throws IOException {
            throw new IOException("Broken pipe");
          }
        };
    ExecResult r = runner().exec("yes", List.of(), streams(broken, null));
    assertThat(r.signal()).isEqualTo(13); // SIGPIPE, as `yes | true` ends it
  }

  @Test
  void streamedExecsLeaveNoThreadOrFdBehind() throws Exception {
    long fdsBefore = OpenFds.settled();
    for (int i = 0; i < 20; i++) {
      Recording out = new Recording(null);
      ExecResult r =
          runner()
              .exec(
                  "sh",
                  List.of("-c", "echo " + i + "; echo x >&2; sleep 0.01 &"),
                  streams(out, new Recording(null)));
      assertThat(r.exitCode()).isZero();
      assertThat(out.text()).isEqualTo(i + "\n");
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!pumps().isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(pumps()).as("output pump threads").isEmpty();
    assertThat(OpenFds.settled()).isEqualTo(fdsBefore);
  }

  @Test
  void aBackgroundHolderIsCutAtTheDrainAsWhenTheOutputIsKept() {
    Recording out = new Recording(null);
    long start = System.nanoTime();
    ExecResult r =
        runner().exec("sh", List.of("-c", "echo now; (sleep 30; echo late) &"), streams(out, null));
    assertThat(r.exitCode()).isZero();
    assertThat(out.text()).isEqualTo("now\n");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void aSessionRefusesOutputStreams() {
    ExecOptions opts = streams(new Recording(null), null);
    assertThatThrownBy(() -> ProcessSpec.pipes(List.of("true")).withOptions(opts))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION))
        .hasMessageContaining("output streams are for exec");
  }

  private static List<Thread> pumps() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("confine-output-"))
        .toList();
  }
}
