package dev.confine.bench;

import com.pty4j.PtyProcess;
import com.pty4j.PtyProcessBuilder;
import dev.confine.ExecOptions;
import dev.confine.ResourceLimits;
import dev.confine.SequenceGapException;
import dev.confine.session.OutputChunk;
import dev.confine.session.OutputRead;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;

/**
 * What the session benchmarks share: the log size, the read loops and pty4j's set-up.
 *
 * <p>The throughput benchmarks fork with a fixed, pre-touched 2 GiB heap ({@code -Xms2g -Xmx2g
 * -XX:+AlwaysPreTouch}), both sides alike. Without it G1 keeps growing the heap through the whole
 * short JMH run, and every MiB the session allocates for its log lands on memory the kernel has
 * never handed out: the page faults and zeroing of that growth were most of the event loop's time,
 * a warm-up cost that a longer-running JVM pays once. The stream baselines allocate nothing, so the
 * setting only takes a transient off the session side; the retained log's GC copying and the
 * per-read arrays still count.
 */
final class Sessions {
  static final long MIB = 1L << 20;

  /** The output of the throughput benchmarks: 256 MiB. */
  static final long SIZE = 256 * MIB;

  /** {@link #SIZE} in MiB: the ops of one throughput invocation, so that scores are MiB/s. */
  static final int MIBS = (int) (SIZE / MIB);

  /** The pipe throughput benchmarks' child: {@link #SIZE} bytes of zeros to stdout. */
  static final List<String> ZEROS_ARGV = List.of("head", "-c", Long.toString(SIZE), "/dev/zero");

  /**
   * The output log of a throughput session: 64 MiB, a quarter of what goes through. The reader must
   * keep within that of the child; when it falls further behind, the log drops what it has not
   * read, the read fails with {@link SequenceGapException} and so does the benchmark.
   */
  static final long LOG_BYTES = Long.getLong("confine.bench.log", 64 * MIB);

  /** The most bytes one chunk {@code read} of a session returns. */
  static final int READ_BYTES = 1 << 20;

  /**
   * The buffer of every reader, the stream readers' (ProcessBuilder, pty4j) and the session's read
   * into a buffer: the engine's read size.
   */
  static final int STREAM_BUFFER = 64 * 1024;

  /** Session options with a {@link #LOG_BYTES} output log. */
  static final ExecOptions THROUGHPUT_OPTIONS =
      ExecOptions.builder()
          .resources(ResourceLimits.builder().maxOutputBytes(LOG_BYTES).build())
          .build();

  private Sessions() {}

  /**
   * Reads a session from offset 0 to end of file into one reused {@link #STREAM_BUFFER} buffer, as
   * a stream reader does ({@link ProcessSession#read(long, ByteBuffer)}: no allocation per read),
   * and returns the number of bytes.
   *
   * @throws IllegalStateException when the reader fell more than the log behind (a gap)
   */
  static long drain(ProcessSession s) throws InterruptedException {
    ByteBuffer buf = ByteBuffer.allocate(STREAM_BUFFER);
    long seq = 0;
    long bytes = 0;
    while (true) {
      OutputRead r;
      try {
        r = s.read(seq, buf.clear());
      } catch (SequenceGapException e) {
        throw gap(seq, e);
      }
      bytes += r.length();
      seq = r.nextSeq();
      if (r.eof()) {
        return bytes;
      }
    }
  }

  /**
   * Reads a session from offset 0 to end of file as chunks, {@link #READ_BYTES} at a time, and
   * returns the number of bytes. The chunks are not copied again: {@link OutputChunk#buffer()}
   * already gives the bytes in the heap (in arrays the read allocated).
   *
   * @throws IllegalStateException when the reader fell more than the log behind (a gap)
   */
  static long drainChunks(ProcessSession s) throws InterruptedException {
    long seq = 0;
    long bytes = 0;
    while (true) {
      ProcessOutput out;
      try {
        out = s.read(seq, READ_BYTES);
      } catch (SequenceGapException e) {
        throw gap(seq, e);
      }
      List<OutputChunk> chunks = out.chunks();
      for (int i = 0, n = chunks.size(); i < n; i++) {
        bytes += chunks.get(i).length();
      }
      seq = out.nextSeq();
      if (out.eof()) {
        return bytes;
      }
    }
  }

  private static IllegalStateException gap(long seq, SequenceGapException e) {
    return new IllegalStateException(
        "the reader fell more than the log ("
            + LOG_BYTES / MIB
            + " MiB) behind the child at offset "
            + seq
            + ": "
            + e.getMessage(),
        e);
  }

  /** Reads {@code in} to end of file into one reused buffer and returns the number of bytes. */
  static long drain(InputStream in) throws IOException {
    byte[] buf = new byte[STREAM_BUFFER];
    long bytes = 0;
    int n;
    while ((n = in.read(buf)) >= 0) {
      bytes += n;
    }
    return bytes;
  }

  /**
   * Starts {@code argv} on a 24x80 pty with pty4j, in {@code dir}, with this JVM's environment.
   * pty4j keeps a slave fd open until it has reaped the child ({@code
   * setUnixOpenTtyToPreserveOutputAfterTermination}): without it, output the child wrote just
   * before it exited is lost when the last slave fd closes first (a {@code printf x} read as end of
   * file), which Confine's sessions never do.
   */
  static PtyProcess startPty4j(Path dir, String... argv) throws IOException {
    return new PtyProcessBuilder(argv)
        .setDirectory(dir.toString())
        .setEnvironment(System.getenv())
        .setInitialRows(24)
        .setInitialColumns(80)
        .setUnixOpenTtyToPreserveOutputAfterTermination(true)
        .start();
  }

  /** Waits for a pty4j child and releases its pty (both streams closed). */
  static int finish(PtyProcess p) throws InterruptedException, IOException {
    int code = p.waitFor();
    p.getOutputStream().close();
    p.getInputStream().close();
    return code;
  }

  static long checkLength(long length, long expected) {
    if (length != expected) {
      throw new IllegalStateException("read " + length + " bytes, expected " + expected);
    }
    return length;
  }
}
