package dev.confine.session;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.SandboxException;
import dev.confine.host.OutputLog;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link ProcessSession}'s default reads, for sessions that only read chunks with a timeout: the
 * no-timeout reads wait without one, and a read into a buffer gives what the log's own gives.
 */
class ProcessSessionTest {
  /**
   * A session that implements only the chunk read with a timeout, from {@code log}; nothing else is
   * used.
   */
  private record ChunkOnly(OutputLog log) implements ProcessSession {
    @Override
    public ProcessOutput read(long afterSeq, int maxBytes, Duration timeout)
        throws InterruptedException {
      long deadline;
      try {
        deadline = Math.addExact(System.nanoTime(), timeout.toNanos());
      } catch (ArithmeticException e) {
        deadline = Long.MAX_VALUE; // ChronoUnit.FOREVER, as the no-timeout reads pass
      }
      return log.read(afterSeq, maxBytes, deadline);
    }

    @Override
    public String id() {
      throw new UnsupportedOperationException();
    }

    @Override
    public int pid() {
      throw new UnsupportedOperationException();
    }

    @Override
    public void write(byte[] data) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void closeStdin() {
      throw new UnsupportedOperationException();
    }

    @Override
    public void resize(int rows, int cols) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void terminate() {
      throw new UnsupportedOperationException();
    }

    @Override
    public ProcessExit waitFor() {
      throw new UnsupportedOperationException();
    }

    @Override
    public Optional<ProcessExit> waitFor(Duration timeout) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Optional<ProcessExit> exitValue() {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {}
  }

  @Test
  void theDefaultBufferReadGivesWhatTheLogsOwnGives() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, "ab".getBytes(UTF_8));
    log.append(ProcessStream.STDOUT, "cde".getBytes(UTF_8));
    log.append(ProcessStream.STDERR, "E".getBytes(UTF_8));
    log.append(ProcessStream.STDOUT, "fgh".getBytes(UTF_8));
    log.finish(ProcessExit.exited(0));
    ProcessSession s = new ChunkOnly(log);
    for (int room = 1; room <= 10; room++) {
      for (long at = 0; at <= log.nextSeq(); at++) {
        ByteBuffer viaDefault = ByteBuffer.allocate(room);
        ByteBuffer viaLog = ByteBuffer.allocate(room);
        assertThat(s.read(at, viaDefault)).isEqualTo(log.read(at, viaLog));
        assertThat(viaDefault.flip()).isEqualTo(viaLog.flip());
      }
    }
  }

  @Test
  void theDefaultNoTimeoutReadsWaitForOutputWithoutADeadline() throws Exception {
    OutputLog log = new OutputLog(0);
    ProcessSession s = new ChunkOnly(log);
    Thread writer =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    Thread.sleep(200);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  log.append(ProcessStream.STDOUT, "late".getBytes(UTF_8));
                });
    ProcessOutput out = s.read(0, 16);
    assertThat(out.chunks()).hasSize(1);
    assertThat(new String(out.chunks().get(0).data(), UTF_8)).isEqualTo("late");
    ByteBuffer into = ByteBuffer.allocate(8);
    Thread later =
        Thread.ofPlatform().start(() -> log.append(ProcessStream.STDOUT, "more".getBytes(UTF_8)));
    OutputRead r = s.read(out.nextSeq(), into);
    assertThat(r.length()).isEqualTo(4);
    writer.join();
    later.join();
  }

  @Test
  void theDefaultBufferReadTimesOutAndChecksTheBuffer() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    ProcessSession s = new ChunkOnly(log);
    assertThat(s.read(0, ByteBuffer.allocate(4), Duration.ofMillis(20)))
        .isEqualTo(new OutputRead(0, 0, null, false));
    assertThatThrownBy(() -> s.read(0, ByteBuffer.allocate(0)))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("no room");
  }
}
