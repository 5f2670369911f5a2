package dev.confine.session;

import dev.confine.ProcessClosedException;
import dev.confine.SandboxException;
import dev.confine.SequenceGapException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;

/**
 * One running (or ended, not yet closed) process whose output is kept in a bounded, replayable log
 * addressed by byte offsets. A client that disconnects can come back and read from the last offset
 * it saw, as long as the log still holds it.
 *
 * <p>Every method is thread-safe. After {@link #close()} every operation except {@link #waitFor()},
 * {@link #exitValue()}, {@link #id()} and {@link #pid()} throws {@link ProcessClosedException}.
 */
public interface ProcessSession extends AutoCloseable {
  /** The session's id, unique among the open sessions of its manager. */
  String id();

  /** The child's pid, which is also its process group and session id. */
  int pid();

  /**
   * Reads output from offset {@code afterSeq} on, waiting until there is some or the process has
   * ended.
   *
   * @param maxBytes the most bytes to return (positive)
   * @return the chunks from {@code afterSeq}; empty with {@code eof} when the process has ended and
   *     the cursor is at the end
   * @throws SequenceGapException when the log no longer holds {@code afterSeq} (or it is negative)
   * @throws SandboxException VALIDATION when {@code maxBytes} is not positive or {@code afterSeq}
   *     lies beyond the output written so far
   * @throws ProcessClosedException when the session is closed, also while waiting
   */
  default ProcessOutput read(long afterSeq, int maxBytes) throws InterruptedException {
    return read(afterSeq, maxBytes, ChronoUnit.FOREVER.getDuration());
  }

  /**
   * As {@link #read(long, int)}, waiting at most {@code timeout} (any length, {@link
   * ChronoUnit#FOREVER}'s included); when nothing came in time, the result is empty, not at end of
   * file, and its {@code nextSeq} is {@code afterSeq}.
   */
  ProcessOutput read(long afterSeq, int maxBytes, Duration timeout) throws InterruptedException;

  /**
   * Reads output from offset {@code afterSeq} on into {@code into}, waiting until there is some or
   * the process has ended: the bytes of consecutive chunks of one stream (the stream of the chunk
   * holding {@code afterSeq}), as many as {@code into} has room for. The buffer's position advances
   * by the number of bytes copied. A client that streams a session's output through one buffer this
   * way allocates nothing per read (the engine's sessions copy straight from their log; the default
   * goes through {@link #read(long, int, Duration)}).
   *
   * @return how many bytes were copied, from which stream, and the cursor for the next read
   * @throws SequenceGapException when the log no longer holds {@code afterSeq} (or it is negative)
   * @throws SandboxException VALIDATION when {@code into} is read-only or has no room, or {@code
   *     afterSeq} lies beyond the output written so far
   * @throws ProcessClosedException when the session is closed, also while waiting
   */
  default OutputRead read(long afterSeq, ByteBuffer into) throws InterruptedException {
    return read(afterSeq, into, ChronoUnit.FOREVER.getDuration());
  }

  /**
   * As {@link #read(long, ByteBuffer)}, waiting at most {@code timeout}; when nothing came in time,
   * nothing is copied, the result is not at end of file and its {@code nextSeq} is {@code
   * afterSeq}.
   */
  default OutputRead read(long afterSeq, ByteBuffer into, Duration timeout)
      throws InterruptedException {
    return copy(afterSeq, read(afterSeq, room(into), timeout), into);
  }

  /**
   * The room {@code into} has for a read.
   *
   * @throws SandboxException VALIDATION when it is read-only or has none
   */
  private static int room(ByteBuffer into) {
    if (into.isReadOnly() || !into.hasRemaining()) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "Read buffer must be writable and have room (got "
              + (into.isReadOnly() ? "a read-only buffer" : "no room")
              + ")");
    }
    return into.remaining();
  }

  /** The chunks of {@code out} on the stream of its first, copied into {@code into}. */
  private static OutputRead copy(long afterSeq, ProcessOutput out, ByteBuffer into) {
    List<OutputChunk> chunks = out.chunks();
    if (chunks.isEmpty()) {
      return new OutputRead(afterSeq, 0, null, out.eof());
    }
    ProcessStream stream = chunks.get(0).stream();
    long next = afterSeq;
    for (OutputChunk c : chunks) {
      if (c.stream() != stream) {
        return new OutputRead(next, (int) (next - afterSeq), stream, false);
      }
      into.put(c.buffer());
      next = c.end();
    }
    return new OutputRead(next, (int) (next - afterSeq), stream, out.eof());
  }

  /**
   * Writes {@code data} to the child's stdin (the terminal's input for a PTY session), waiting
   * until every byte is written. Empty data returns at once.
   *
   * @throws SandboxException INTERNAL when the child no longer reads (its stdin is closed)
   * @throws ProcessClosedException when the session is closed
   */
  void write(byte[] data) throws InterruptedException;

  /**
   * Closes the child's stdin (pipe sessions) so that it sees end of file; on a terminal, writes the
   * VEOF character (Ctrl-D) instead.
   *
   * @throws ProcessClosedException when the session is closed
   */
  void closeStdin();

  /**
   * Sets the terminal's size; the child receives SIGWINCH.
   *
   * @throws SandboxException VALIDATION when a dimension is not positive (checked first);
   *     NOT_AVAILABLE for a pipe session
   * @throws ProcessClosedException when the session is closed
   */
  void resize(int rows, int cols);

  /**
   * Ends the process: SIGTERM to its process group, then SIGKILL to the whole tree if it has not
   * ended within 2 s. Returns at once when it had already ended. An interrupt while waiting kills
   * the tree at once (the interrupt status stays set).
   *
   * @throws ProcessClosedException when the session is closed
   */
  void terminate();

  /** Waits until the process has ended and all its output is in the log; works after close. */
  ProcessExit waitFor() throws InterruptedException;

  /** As {@link #waitFor()}, at most {@code timeout}; empty when the process is still running. */
  Optional<ProcessExit> waitFor(Duration timeout) throws InterruptedException;

  /** How the process ended, or empty while it runs. */
  Optional<ProcessExit> exitValue();

  /**
   * Kills the tree if it still runs, releases everything the session holds and wakes blocked
   * readers and watchers (which then see {@link ProcessClosedException} or a CLOSED event).
   * Idempotent.
   */
  @Override
  void close();
}
