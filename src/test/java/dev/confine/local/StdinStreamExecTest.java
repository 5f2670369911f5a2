package dev.confine.local;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.testing.OpenFds;
import dev.confine.testing.Thrown;
import java.io.ByteArrayInputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stdin stream is piped into the child while it runs: the child starts at once, sees its input as
 * it comes, and an input that never ends, or ends early, or fails, never holds the exec or leaves a
 * thread or fd behind.
 */
@Timeout(60)
class StdinStreamExecTest {
  @TempDir Path root;

  private LocalRunner runner() {
    return LocalRunner.create(root.toString());
  }

  private static ExecOptions stdin(InputStream in) {
    return ExecOptions.builder().stdinStream(in).build();
  }

  /** {@code yes}: "y\n" for ever. */
  static final class Endless extends InputStream {
    @Override
    public int read() {
      return 'y';
    }

    @Override
    public int read(byte[] b, int off, int len) {
      for (int i = 0; i < len; i++) {
        b[off + i] = (byte) (i % 2 == 0 ? 'y' : '\n');
      }
      return len;
    }
  }

  /** A stream whose reads block until {@link #release}, then end. */
  static final class Silent extends InputStream {
    final CountDownLatch released = new CountDownLatch(1);
    final CountDownLatch reading = new CountDownLatch(1);

    @Override
    public int read() throws IOException {
      reading.countDown();
      while (released.getCount() > 0) {
        try {
          released.await();
        } catch (InterruptedException e) {
          // Ignored on purpose: the worst kind of stream for the exec to stop.
        }
      }
      return -1;
    }

    void release() {
      released.countDown();
    }
  }

  private static List<Thread> pumps() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("confine-stdin-"))
        .toList();
  }

  private static void awaitNoPumps() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!pumps().isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(pumps()).as("stdin pump threads still running").isEmpty();
  }

  @Test
  void anEndlessStreamDoesNotHoldAChildThatNeverReadsIt() throws Exception {
    ExecResult r = runner().exec("sleep", List.of("0.3"), stdin(new Endless()));
    assertThat(r.exitCode()).isZero();
    awaitNoPumps(); // the child's exit closed the pipe: EPIPE ended the pump
  }

  @Test
  void aChildThatStopsReadingEndsThePumpAndKeepsItsOutputAndStatus() throws Exception {
    ExecResult r = runner().exec("sh", List.of("-c", "head -c 10; exit 3"), stdin(new Endless()));
    assertThat(r.exitCode()).isEqualTo(3);
    assertThat(r.stdoutText()).isEqualTo("y\ny\ny\ny\ny\n");
    awaitNoPumps();
  }

  @Test
  void aProcessThatHoldsStdinOpenWithoutReadingDoesNotKeepThePump() throws Exception {
    // The escapee keeps the pipe's read end (and so no EPIPE comes) while the exec ends: the pump,
    // waiting in poll for room in the full pipe, is woken by the exec's end and lets go.
    long fdsBefore = OpenFds.settled();
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of("-c", "setsid sleep 3 >/dev/null 2>&1 & echo $!"),
                stdin(new Endless()));
    assertThat(r.exitCode()).isZero();
    awaitNoPumps();
    assertThat(OpenFds.settled()).isEqualTo(fdsBefore);
    long escapee = Long.parseLong(r.stdoutText().trim());
    ProcessHandle.of(escapee).ifPresent(ProcessHandle::destroyForcibly); // ours: started above
  }

  @Test
  void devZeroIsStreamedNotReadWhole() throws Exception {
    try (InputStream zero = new FileInputStream("/dev/zero")) {
      ExecResult r = runner().exec("head", List.of("-c", "3000000"), stdin(zero));
      assertThat(r.stdoutLength()).isEqualTo(3_000_000);
      assertThat(r.stdout()).containsOnly(0);
    }
    awaitNoPumps();
  }

  @Test
  void theWholeStreamReachesTheChildThenItsEnd() {
    byte[] data = new byte[5_000_000]; // larger than any pipe or buffer on the way
    new java.util.Random(12).nextBytes(data);
    ExecResult r =
        runner().exec("sh", List.of("-c", "cat; exit 7"), stdin(new ByteArrayInputStream(data)));
    assertThat(r.exitCode()).isEqualTo(7);
    assertThat(r.stdout()).isEqualTo(data);
  }

  @Test
  void anEmptyStreamIsAnEmptyPipe() {
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of("-c", "test -p /dev/stdin && echo pipe; cat"),
                stdin(InputStream.nullInputStream()));
    assertThat(r.stdoutText()).isEqualTo("pipe\n");
  }

  @Test
  void aChildReadingLineByLineSeesEachLineBeforeTheNextExists() throws Exception {
    Path seen = root.resolve("seen");
    InputStream conversation =
        new InputStream() {
          int step;

          @Override
          public int read() {
            throw new UnsupportedOperationException();
          }

          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            if (step == 1) {
              // The second line exists only once the child has answered the first.
              long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
              while (!(Files.exists(seen) && Files.readString(seen).equals("one\n"))) {
                if (System.nanoTime() > deadline) {
                  throw new IOException("the child never saw the first line");
                }
                Thread.onSpinWait();
              }
            }
            String next =
                switch (step++) {
                  case 0 -> "one\n";
                  case 1 -> "two\n";
                  default -> null;
                };
            if (next == null) {
              return -1;
            }
            byte[] bytes = next.getBytes(UTF_8);
            System.arraycopy(bytes, 0, b, off, bytes.length);
            return bytes.length;
          }
        };
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of("-c", "read a; echo \"$a\" > seen; read b; echo \"$a,$b\""),
                ExecOptions.builder()
                    .stdinStream(conversation)
                    .timeout(Duration.ofSeconds(30))
                    .build());
    assertThat(r.stdoutText()).isEqualTo("one,two\n");
  }

  @Test
  void aSilentStreamDoesNotDelayTheStartAndTheTimeoutCountsFromIt() throws Exception {
    Silent silent = new Silent();
    long fdsBefore = OpenFds.settled();
    long start = System.nanoTime();
    SandboxException e =
        Thrown.sandbox(
            () ->
                runner()
                    .exec(
                        "sh",
                        List.of("-c", "echo started; cat"),
                        ExecOptions.builder()
                            .stdinStream(silent)
                            .timeout(Duration.ofMillis(500))
                            .build()));
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
    assertThat(e.partialResult().orElseThrow().stdoutText()).isEqualTo("started\n");
    assertThat(ms).isLessThan(5_000);
    // The pump is stuck in a read that ignores interrupts, yet it holds no fd of the exec.
    assertThat(silent.reading.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(OpenFds.settled()).isEqualTo(fdsBefore);
    assertThat(pumps()).hasSize(1);
    silent.release(); // its read returns; the pump sees the exec is over and ends
    awaitNoPumps();
  }

  @Test
  void anInterruptibleStreamThatNeverEndsIsStoppedWhenTheExecEnds() throws Exception {
    Pipe pipe = Pipe.open(); // nothing is ever written to its sink
    try {
      InputStream never = Channels.newInputStream(pipe.source());
      SandboxException e =
          Thrown.sandbox(
              () ->
                  runner()
                      .exec(
                          "cat",
                          List.of(),
                          ExecOptions.builder()
                              .stdinStream(never)
                              .timeout(Duration.ofMillis(300))
                              .build()));
      assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
      awaitNoPumps(); // the interrupt ended the channel read at once
    } finally {
      pipe.sink().close();
      pipe.source().close();
    }
  }

  @Test
  void aStreamThatFailsEndsTheInputThereAndTheExecSaysSo() throws Exception {
    InputStream failing =
        new InputStream() {
          boolean gave;

          @Override
          public int read() {
            throw new UnsupportedOperationException();
          }

          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            if (gave) {
              throw new IOException("disk gone");
            }
            gave = true;
            b[off] = 'p';
            return 1;
          }
        };
    SandboxException e = Thrown.sandbox(() -> runner().exec("cat", List.of(), stdin(failing)));
    assertThat(e.kind()).isEqualTo(Kind.INTERNAL);
    assertThat(e.getMessage())
        .isEqualTo(
            "sandbox: exec cat: reading its stdin stream failed after 1 bytes"
                + " (java.io.IOException: disk gone); the command read end of file there");
    assertThat(e.getCause()).hasMessage("disk gone");
    ExecResult partial = e.partialResult().orElseThrow();
    assertThat(partial.stdoutText()).isEqualTo("p");
    assertThat(partial.exitCode()).isZero();
    awaitNoPumps();
  }

  @Test
  void aVirtualThreadCallerStreamsToo() throws Exception {
    AtomicReference<Object> got = new AtomicReference<>();
    Thread t =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    got.set(
                        runner()
                            .exec("head", List.of("-c", "6"), stdin(new Endless()))
                            .stdoutText());
                  } catch (Throwable x) {
                    got.set(x);
                  }
                });
    t.join(30_000);
    assertThat(got.get()).isEqualTo("y\ny\ny\n");
    awaitNoPumps();
  }
}
