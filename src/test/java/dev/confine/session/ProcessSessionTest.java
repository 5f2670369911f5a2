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
 * {@link ProcessSession}'s default read into a buffer, for sessions that only read chunks: it must
 * give what the log's own read into a buffer gives.
 */
class ProcessSessionTest {
  /** A session whose chunk reads come from {@code log}; nothing else is used. */
  private record ChunkOnly(OutputLog log) implements ProcessSession {
    @Override
    public ProcessOutput read(long afterSeq, int maxBytes) throws InterruptedException {
      return log.read(afterSeq, maxBytes);
    }

    @Override
    public ProcessOutput read(long afterSeq, int maxBytes, Duration timeout)
        throws InterruptedException {
      return log.read(afterSeq, maxBytes, System.nanoTime() + timeout.toNanos());
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
