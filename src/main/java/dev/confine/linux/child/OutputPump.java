package dev.confine.linux.child;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.pollfd;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Streams one of a child's output pipes into an {@link OutputStream} while the child runs, on a
 * daemon platform thread of its own: each read of the pipe (up to 64 KiB) is written to the stream
 * and flushed before the pipe is read again, so the bytes arrive as the child writes them, in its
 * order, and a stream that is slow to take them holds the child back as a pipe would (its writes
 * block once the pipe is full) without holding up the event loop or a caller's poll. The first
 * {@code cap} bytes are written; later ones are read and dropped ({@link #truncated()}), so the
 * child never sees a short write. A stream that fails ({@link IOException}, a broken pipe
 * downstream) ends the pump: the pipe is closed, and the child's next write gets EPIPE (SIGPIPE),
 * as it would writing to that stream itself.
 *
 * <p>When the pipe reaches end of file (or the pump ends otherwise) the pump adds to {@code
 * doneFd}, an eventfd the exec's driver watches, so that the exec learns of it on its own thread.
 * The pipe and the eventfd that wakes the thread are a {@link PumpPipe}, as {@link StdinPump}'s,
 * whose fds are closed exactly once and never used after. After {@link #stop} the pump never
 * touches {@code doneFd}, which the driver then closes. Only a write to the stream that blocks
 * keeps the thread until it returns.
 *
 * <p>Created by the exec's calling thread, never by a confinement thread (the stream is the
 * caller's).
 */
final class OutputPump implements Runnable {
  private static final int CHUNK = 64 * 1024;
  private static final AtomicLong COUNT = new AtomicLong();

  private final OutputStream sink;
  private final long cap;
  private final PumpPipe pipe;
  private final int doneFd; // the driver's; written once, never after stop()
  private boolean doneSent; // under this
  private long delivered; // the pump's thread only
  private volatile boolean truncated;
  private Thread thread;

  private OutputPump(OutputStream sink, long cap, PumpPipe pipe, int doneFd) {
    this.sink = sink;
    this.cap = cap;
    this.pipe = pipe;
    this.doneFd = doneFd;
  }

  /**
   * Starts streaming {@code pipeFd} (owned by the pump from now on, made non-blocking) into {@code
   * sink}, the first {@code cap} bytes of it.
   *
   * @param doneFd an eventfd the driver watches (and closes), added to when the pump ends
   * @throws ErrnoException when no eventfd or thread can be made; the pipe is then still the
   *     caller's, untouched
   */
  static OutputPump start(OutputStream sink, long cap, int pipeFd, int doneFd) {
    PumpPipe pipe = PumpPipe.open(pipeFd);
    OutputPump pump = new OutputPump(sink, cap, pipe, doneFd);
    try {
      pump.thread =
          Thread.ofPlatform()
              .daemon()
              .name("confine-output-" + COUNT.incrementAndGet())
              .unstarted(pump);
      pump.thread.start();
    } catch (RuntimeException | OutOfMemoryError e) {
      pipe.giveBack();
      throw new ErrnoException("pthread_create (output pump: " + e + ")", LibC.EAGAIN());
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
        long n = pipe.read(buf, CHUNK);
        if (n == 0) {
          return; // end of file: every writer closed the pipe
        }
        if (n == -LibC.EAGAIN()) {
          if (!pipe.await(LibC.POLLIN(), pfds)) {
            return;
          }
        } else if (n < 0) {
          if (n != -LibC.EINTR()) {
            return; // the pipe failed (or was stopped: EBADF): its end as far as anyone can read
          }
        } else if (!deliver(buf, (int) n, chunk)) {
          return;
        }
      }
    } finally {
      pipe.close();
      signalDone();
    }
  }

  /** Writes what the cap leaves of {@code n} bytes; false when the stream failed. */
  private boolean deliver(MemorySegment buf, int n, byte[] chunk) {
    long room = cap - delivered;
    int keep = (int) Math.min(n, Math.max(room, 0));
    if (keep < n) {
      truncated = true;
    }
    if (keep == 0) {
      return true; // read and dropped, so that the child goes on
    }
    MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, 0, chunk, 0, keep);
    try {
      sink.write(chunk, 0, keep);
      sink.flush();
    } catch (IOException e) {
      return false; // the stream's end: the child's next write to the closed pipe fails
    }
    delivered += keep;
    return true;
  }

  /**
   * Ends the pump: the pipe is closed at once (a child that still writes gets EPIPE), a wait in
   * poll wakes, and {@code doneFd} is no longer the pump's. Idempotent; never blocks.
   */
  void stop() {
    synchronized (this) {
      doneSent = true; // the driver closes doneFd from now on
    }
    pipe.stop();
  }

  /**
   * Waits up to {@code timeout} for the thread to have written everything it will write (it ends
   * within a poll after {@link #stop}, unless a write to the stream blocks).
   */
  boolean awaitEnd(long timeout, TimeUnit unit) throws InterruptedException {
    return thread == null || thread.join(Duration.ofNanos(unit.toNanos(timeout)));
  }

  private synchronized void signalDone() {
    if (!doneSent) {
      doneSent = true;
      Syscalls.write(doneFd, PumpPipe.eventfdOne(), 8);
    }
  }

  /** Whether more than the cap came (the rest was read and dropped). */
  boolean truncated() {
    return truncated;
  }
}
