package dev.confine.linux.child;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.pollfd;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Feeds a child's stdin pipe from an {@link InputStream} while the child runs, on a daemon platform
 * thread of its own: the stream's reads may block for as long as they like without holding up the
 * event loop or a caller's poll, and input that never ends is never held whole.
 *
 * <p>The thread reads up to 64 KiB, writes it to the pipe (non-blocking, waiting in {@code poll}
 * for room or for {@link #stop}), and repeats until the stream ends (the pipe is closed, so the
 * child reads end of file), the child closes its stdin (EPIPE: not a failure) or {@link #stop}. The
 * pipe and the eventfd that wakes the thread are a {@link PumpPipe}, whose fds are closed exactly
 * once and never used after. After {@link #stop} the pump holds no fd; only a stream read that
 * ignores interrupts keeps its thread until the read returns.
 *
 * <p>Created by the exec's calling thread, never by a confinement thread: a thread inherits the
 * confinement (seccomp, Landlock, namespaces) of the thread that creates it, and the stream is the
 * caller's, to be read with the caller's rights.
 */
final class StdinPump implements Runnable {
  private static final int CHUNK = 64 * 1024;
  private static final AtomicLong COUNT = new AtomicLong();

  private final InputStream in;
  private final PumpPipe pipe;
  private volatile Throwable failure;
  private volatile long written;
  private Thread thread;

  private StdinPump(InputStream in, PumpPipe pipe) {
    this.in = in;
    this.pipe = pipe;
  }

  /**
   * Starts pumping {@code in} into {@code pipeFd}, which the pump owns from now on. When the pump
   * cannot start (no eventfd, no thread), the pipe is closed, so that the child reads end of file
   * at once, and the reason is the pump's {@link #failure()}: it never throws, as the child may
   * already run.
   */
  static StdinPump start(InputStream in, int pipeFd) {
    PumpPipe pipe;
    try {
      pipe = PumpPipe.open(pipeFd);
    } catch (ErrnoException e) {
      Syscalls.close(pipeFd);
      StdinPump failed = new StdinPump(in, null);
      failed.failure = e;
      return failed;
    }
    StdinPump pump = new StdinPump(in, pipe);
    try {
      pump.thread =
          Thread.ofPlatform()
              .daemon()
              .name("confine-stdin-" + COUNT.incrementAndGet())
              .unstarted(pump);
      pump.thread.start();
    } catch (RuntimeException | OutOfMemoryError e) {
      pump.failure = e; // OutOfMemoryError: "unable to create native thread"
      pipe.close();
    }
    return pump;
  }

  @Override
  public void run() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment buf = arena.allocate(CHUNK);
      MemorySegment pfds = pollfd.allocateArray(2, arena);
      byte[] chunk = new byte[CHUNK];
      while (!pipe.stopped()) {
        int n;
        try {
          n = in.read(chunk);
        } catch (Throwable t) {
          if (!pipe.stopped()) {
            failure = t;
          }
          return;
        }
        if (n < 0 || pipe.stopped()) {
          return; // the end of the input: closing the pipe tells the child
        }
        MemorySegment.copy(chunk, 0, buf, ValueLayout.JAVA_BYTE, 0, n);
        if (!writeAll(buf, n, pfds)) {
          return;
        }
      }
    } finally {
      pipe.close();
    }
  }

  /**
   * Writes {@code n} bytes of {@code buf}; false when the child or {@link #stop} ended the pump.
   */
  private boolean writeAll(MemorySegment buf, int n, MemorySegment pfds) {
    int off = 0;
    while (off < n) {
      long r = pipe.write(buf.asSlice(off), n - off);
      if (r > 0) {
        off += (int) r;
        written += r;
      } else if (r == -LibC.EAGAIN()) {
        if (!pipe.await(LibC.POLLOUT(), pfds)) {
          return false;
        }
      } else if (r != -LibC.EINTR()) {
        return false; // EPIPE: the child closed its stdin, which is its right; EBADF: stopped
      }
    }
    return true;
  }

  /**
   * Ends the pump: the pipe is closed at once (the child, if it still runs, reads end of file), a
   * wait in poll wakes, and a read of the stream is interrupted. Idempotent; never blocks.
   */
  void stop() {
    if (pipe != null) {
      pipe.stop();
    }
    if (thread != null && thread != Thread.currentThread()) {
      thread.interrupt();
    }
  }

  /** Why the stream could not be read to its end (its exception), or null. */
  Throwable failure() {
    return failure;
  }

  /** How many bytes reached the pipe. */
  long written() {
    return written;
  }
}
