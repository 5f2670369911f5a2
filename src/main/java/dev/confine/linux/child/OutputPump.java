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
 * The pipe's fd is closed exactly once, under the pump's lock, by whichever of the thread and
 * {@link #stop} comes first, and every read happens under that lock after checking it is open, so a
 * read never reaches another file that reused the number (the pattern of {@link StdinPump}). After
 * {@link #stop} the pump never touches {@code doneFd}, which the driver then closes. Only a write
 * to the stream that blocks keeps the thread until it returns.
 *
 * <p>Created by the exec's calling thread, never by a confinement thread (the stream is the
 * caller's).
 */
final class OutputPump implements Runnable {
  private static final int CHUNK = 64 * 1024;
  private static final AtomicLong COUNT = new AtomicLong();
  private static final MemorySegment ONE = one();

  private final OutputStream sink;
  private final long cap;
  private final Object lock = new Object();
  private int pipeFd; // -1 once closed
  private int wakeFd; // -1 once closed
  private final int doneFd; // the driver's; written once, never after stop()
  private boolean polling; // the thread waits in poll on wakeFd
  private boolean doneSent;
  private volatile boolean stopped;
  private volatile IOException failure;
  private volatile long delivered;
  private volatile boolean truncated;
  private Thread thread;

  private OutputPump(OutputStream sink, long cap, int pipeFd, int wakeFd, int doneFd) {
    this.sink = sink;
    this.cap = cap;
    this.pipeFd = pipeFd;
    this.wakeFd = wakeFd;
    this.doneFd = doneFd;
  }

  /**
   * Starts streaming {@code pipeFd} (non-blocking, owned by the pump from now on) into {@code
   * sink}, the first {@code cap} bytes of it.
   *
   * @param doneFd an eventfd the driver watches (and closes), added to when the pump ends
   * @throws ErrnoException when no eventfd or thread can be made; the pipe is then still the
   *     caller's, untouched
   */
  static OutputPump start(OutputStream sink, long cap, int pipeFd, int doneFd) {
    int wake = Syscalls.eventfd(0, LibC.EFD_CLOEXEC() | LibC.EFD_NONBLOCK());
    if (wake < 0) {
      throw new ErrnoException("eventfd", -wake);
    }
    OutputPump pump = new OutputPump(sink, cap, pipeFd, wake, doneFd);
    try {
      pump.thread =
          Thread.ofPlatform()
              .daemon()
              .name("confine-output-" + COUNT.incrementAndGet())
              .unstarted(pump);
      pump.thread.start();
    } catch (RuntimeException | OutOfMemoryError e) {
      Syscalls.close(wake); // the thread never ran: nothing else holds the fds
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
      while (!stopped) {
        long n;
        synchronized (lock) {
          if (pipeFd < 0) {
            return;
          }
          n = Syscalls.read(pipeFd, buf, CHUNK);
        }
        if (n == 0) {
          return; // end of file: every writer closed the pipe
        }
        if (n == -LibC.EAGAIN()) {
          if (!awaitInput(pfds)) {
            return;
          }
          continue;
        }
        if (n < 0) {
          if (n == -LibC.EINTR()) {
            continue;
          }
          return; // the pipe failed: its end as far as anyone can read
        }
        if (!deliver(buf, (int) n, chunk)) {
          return;
        }
      }
    } finally {
      closeFds();
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
      failure = e;
      return false;
    }
    delivered += keep;
    return true;
  }

  /** Waits until the pipe has input (or is at its end) or {@link #stop} is called. */
  private boolean awaitInput(MemorySegment pfds) {
    long size = pollfd.sizeof();
    synchronized (lock) {
      if (stopped || pipeFd < 0) {
        return false;
      }
      polling = true;
      MemorySegment p = pfds.asSlice(0, size);
      pollfd.fd(p, pipeFd);
      pollfd.events(p, (short) LibC.POLLIN());
      pollfd.revents(p, (short) 0);
      MemorySegment w = pfds.asSlice(size, size);
      pollfd.fd(w, wakeFd);
      pollfd.events(w, (short) LibC.POLLIN());
      pollfd.revents(w, (short) 0);
    }
    try {
      Syscalls.poll(pfds, 2, -1); // stop() writes to the eventfd; the pipe's end gives POLLHUP
    } finally {
      synchronized (lock) {
        polling = false;
      }
    }
    return !stopped;
  }

  /**
   * Ends the pump: the pipe is closed at once (a child that still writes gets EPIPE), a wait in
   * poll wakes, and {@code doneFd} is no longer the pump's. Idempotent; never blocks.
   */
  void stop() {
    stopped = true;
    synchronized (lock) {
      doneSent = true; // the driver closes doneFd from now on
      if (pipeFd >= 0) {
        Syscalls.close(pipeFd);
        pipeFd = -1;
      }
      if (polling) {
        Syscalls.write(wakeFd, ONE, 8); // the thread closes it when it wakes
      } else if (wakeFd >= 0) {
        Syscalls.close(wakeFd);
        wakeFd = -1;
      }
    }
  }

  /**
   * Waits up to {@code timeout} for the thread to have written everything it will write (it ends
   * within a poll after {@link #stop}, unless a write to the stream blocks).
   */
  boolean awaitEnd(long timeout, TimeUnit unit) throws InterruptedException {
    return thread == null || thread.join(Duration.ofNanos(unit.toNanos(timeout)));
  }

  private void signalDone() {
    synchronized (lock) {
      if (!doneSent) {
        doneSent = true;
        Syscalls.write(doneFd, ONE, 8);
      }
    }
  }

  private void closeFds() {
    synchronized (lock) {
      if (pipeFd >= 0) {
        Syscalls.close(pipeFd);
        pipeFd = -1;
      }
      if (wakeFd >= 0) {
        Syscalls.close(wakeFd);
        wakeFd = -1;
      }
    }
  }

  private static MemorySegment one() {
    MemorySegment one = Arena.global().allocate(ValueLayout.JAVA_LONG);
    one.set(ValueLayout.JAVA_LONG, 0, 1L);
    return one;
  }

  /** Whether more than the cap came (the rest was read and dropped). */
  boolean truncated() {
    return truncated;
  }

  /** How many bytes reached the stream. */
  long delivered() {
    return delivered;
  }

  /** Why the stream stopped taking bytes, or null. */
  IOException failure() {
    return failure;
  }
}
