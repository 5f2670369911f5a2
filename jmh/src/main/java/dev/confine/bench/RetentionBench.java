package dev.confine.bench;

import java.io.File;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What keeping a stream's bytes costs its reader, without a session: the pipe benchmark's child
 * ({@code head -c 268435456 /dev/zero}) read to end of file by a bare FFM loop that reads as a
 * session's client does (a non-blocking pipe, 64 KiB reads into native memory, a 30 us poll spin
 * before it sleeps), and does one of three things with each read: copies it into a new array and
 * keeps the newest 64 MiB of them ({@code newArrays}, what the session's log did until it reused
 * its memory), copies it into one 64 MiB array reused round and round ({@code reusedArray}, what
 * the log's segments now amount to), or nothing ({@code none}). Each value runs in forks of its own
 * (JMH's way with parameters), so each JVM does only that. The diagnostic that found the pipe
 * session's gap to {@code ProcessBuilder} across JVMs, not a target: the scores are MiB/s, compare
 * them as ratios.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 6, time = 4)
@Fork(
    value = 2,
    jvmArgsAppend = {
      "--enable-native-access=ALL-UNNAMED",
      "-Xms2g",
      "-Xmx2g",
      "-XX:+AlwaysPreTouch"
    })
public class RetentionBench {
  private static final int KEPT_BYTES = (int) (64 * Sessions.MIB);
  private static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(30);
  private static final int O_NONBLOCK = 04000;
  private static final int O_CLOEXEC = 02000000;
  private static final int EAGAIN = 11;
  private static final short POLLIN = 1;

  private static final Linker LINKER = Linker.nativeLinker();
  private static final StructLayout STATE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO =
      STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
  private static final MethodHandle PIPE2 =
      downcall(
          "pipe2",
          FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
  private static final MethodHandle READ =
      LINKER.downcallHandle(
          LINKER.defaultLookup().find("read").orElseThrow(),
          FunctionDescriptor.of(
              ValueLayout.JAVA_LONG,
              ValueLayout.JAVA_INT,
              ValueLayout.ADDRESS,
              ValueLayout.JAVA_LONG),
          Linker.Option.captureCallState("errno"));
  private static final MethodHandle POLL =
      downcall(
          "poll",
          FunctionDescriptor.of(
              ValueLayout.JAVA_INT,
              ValueLayout.ADDRESS,
              ValueLayout.JAVA_LONG,
              ValueLayout.JAVA_INT));
  private static final MethodHandle CLOSE =
      downcall("close", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

  /** What the reader does with each read. */
  @Param({"newArrays", "reusedArray", "none"})
  public String keep;

  private final Arena arena = Arena.ofAuto();
  private final MemorySegment buf = arena.allocate(Sessions.STREAM_BUFFER);
  private final MemorySegment fds = arena.allocate(ValueLayout.JAVA_INT, 2);
  private final MemorySegment pollfd = arena.allocate(8);
  private final MemorySegment state = arena.allocate(STATE);
  private final ArrayDeque<byte[]> kept = new ArrayDeque<>();
  private long keptBytes;
  private byte[] ring;
  private int ringAt;

  private static MethodHandle downcall(String name, FunctionDescriptor fd) {
    return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), fd);
  }

  @Benchmark
  @OperationsPerInvocation(Sessions.MIBS)
  public long read() throws Throwable {
    if ((int) PIPE2.invokeExact(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
      throw new IllegalStateException("pipe2 failed");
    }
    int in = fds.getAtIndex(ValueLayout.JAVA_INT, 0);
    int out = fds.getAtIndex(ValueLayout.JAVA_INT, 1);
    Process p;
    try {
      // ProcessBuilder opens the pipe's write end anew through /proc for the child; ours is closed
      // at once, so that end of file comes when the child exits.
      p =
          new ProcessBuilder(Sessions.ZEROS_ARGV)
              .redirectOutput(new File("/proc/self/fd/" + out))
              .start();
    } catch (IOException | RuntimeException e) {
      int ignored = (int) CLOSE.invokeExact(in);
      throw e;
    } finally {
      int ignored = (int) CLOSE.invokeExact(out);
    }
    p.getOutputStream().close();
    long bytes;
    try {
      bytes = drain(in);
    } finally {
      int ignored = (int) CLOSE.invokeExact(in);
    }
    Checks.exitedZero(p.waitFor());
    return Sessions.checkLength(bytes, Sessions.SIZE);
  }

  private long drain(int fd) throws Throwable {
    pollfd.set(ValueLayout.JAVA_INT, 0, fd);
    pollfd.set(ValueLayout.JAVA_SHORT, 4, POLLIN);
    long bytes = 0;
    while (true) {
      long n = (long) READ.invokeExact(state, fd, buf, buf.byteSize());
      if (n > 0) {
        bytes += n;
        keep((int) n);
        continue;
      }
      if (n == 0) {
        return bytes;
      }
      int errno = (int) ERRNO.get(state, 0L);
      if (errno != EAGAIN) {
        throw new IOException("read failed: errno " + errno);
      }
      // Empty while streaming: poll without sleeping for up to 30 us, then sleep in poll.
      long until = System.nanoTime() + SPIN_NANOS;
      int ready;
      do {
        ready = (int) POLL.invokeExact(pollfd, 1L, 0);
      } while (ready == 0 && System.nanoTime() - until < 0);
      if (ready == 0) {
        ready = (int) POLL.invokeExact(pollfd, 1L, 10);
      }
    }
  }

  private void keep(int n) {
    switch (keep) {
      case "newArrays" -> {
        byte[] chunk = new byte[n];
        MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, 0, chunk, 0, n);
        kept.add(chunk);
        keptBytes += n;
        while (keptBytes > KEPT_BYTES) {
          keptBytes -= kept.remove().length;
        }
      }
      case "reusedArray" -> {
        if (ring == null) {
          ring = new byte[KEPT_BYTES];
        }
        if (ringAt + n > ring.length) {
          ringAt = 0;
        }
        MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, 0, ring, ringAt, n);
        ringAt += n;
      }
      case "none" -> {}
      default -> throw new IllegalArgumentException("keep: " + keep);
    }
  }
}
