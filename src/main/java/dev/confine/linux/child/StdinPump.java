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
 * pipe's fd is closed exactly once, under the pump's lock, by whichever of the thread and {@link
 * #stop} comes first, and every write happens under that lock after checking it is open, so a write
 * can never reach another file that reused the fd's number. The wake-up eventfd is closed the same
 * way. After {@link #stop} the pump holds no fd; only a stream read that ignores interrupts keeps
 * its thread until the read returns.
 *
 * <p>Created by the exec's calling thread, never by a confinement thread: a thread inherits the
 * confinement (seccomp, Landlock, namespaces) of the thread that creates it, and the stream is the
 * caller's, to be read with the caller's rights.
 */
final class StdinPump implements Runnable {
  private static final int CHUNK = 64 * 1024;
  private static final AtomicLong COUNT = new AtomicLong();
  private static final MemorySegment ONE = one();

  private final InputStream in;
  private final Object lock = new Object();
  private int pipeFd; // -1 once closed
  private int wakeFd; // -1 once closed
  private boolean polling; // the thread waits in poll on wakeFd
  private volatile boolean stopped;
  private volatile Throwable failure;
  private volatile long written;
  private Thread thread;

  private StdinPump(InputStream in, int pipeFd, int wakeFd) {
    this.in = in;
    this.pipeFd = pipeFd;
    this.wakeFd = wakeFd;
  }

  /**
   * Starts pumping {@code in} into {@code pipeFd}, which the pump owns from now on. When the pump
   * cannot start (no eventfd, no thread), the pipe is closed, so that the child reads end of file
   * at once, and the reason is the pump's {@link #failure()}: it never throws, as the child may
   * already run.
   */
  static StdinPump start(InputStream in, int pipeFd) {
    int wake = Syscalls.eventfd(0, LibC.EFD_CLOEXEC() | LibC.EFD_NONBLOCK());
    StdinPump pump = new StdinPump(in, pipeFd, wake < 0 ? -1 : wake);
    try {
      if (wake < 0) {
        throw new ErrnoException("eventfd", -wake);
      }
      Syscalls.setNonBlocking(pipeFd);
      pump.thread =
          Thread.ofPlatform()
              .daemon()
              .name("confine-stdin-" + COUNT.incrementAndGet())
              .unstarted(pump);
      pump.thread.start();
    } catch (RuntimeException | OutOfMemoryError e) {
      pump.failure = e; // OutOfMemoryError: "unable to create native thread"
      pump.closeFds();
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
        int n;
        try {
          n = in.read(chunk);
        } catch (Throwable t) {
          if (!stopped) {
            failure = t;
          }
          return;
        }
        if (n < 0 || stopped) {
          return; // the end of the input: closing the pipe tells the child
        }
        MemorySegment.copy(chunk, 0, buf, ValueLayout.JAVA_BYTE, 0, n);
        if (!writeAll(buf, n, pfds)) {
          return;
        }
      }
    } finally {
      closeFds();
    }
  }

  /**
   * Writes {@code n} bytes of {@code buf}; false when the child or {@link #stop} ended the pump.
   */
  private boolean writeAll(MemorySegment buf, int n, MemorySegment pfds) {
    int off = 0;
    while (off < n) {
      long r;
      synchronized (lock) {
        if (pipeFd < 0) {
          return false;
        }
        r = Syscalls.write(pipeFd, buf.asSlice(off), n - off);
      }
      if (r > 0) {
        off += (int) r;
        written += r;
      } else if (r == -LibC.EAGAIN()) {
        if (!awaitRoom(pfds)) {
          return false;
        }
      } else if (r != -LibC.EINTR()) {
        return false; // EPIPE: the child closed its stdin, which is its right
      }
    }
    return true;
  }

  /** Waits until the pipe has room or {@link #stop} is called; false for the latter. */
  private boolean awaitRoom(MemorySegment pfds) {
    long size = pollfd.sizeof();
    synchronized (lock) {
      if (stopped || pipeFd < 0) {
        return false;
      }
      polling = true;
      MemorySegment p = pfds.asSlice(0, size);
      pollfd.fd(p, pipeFd);
      pollfd.events(p, (short) LibC.POLLOUT());
      pollfd.revents(p, (short) 0);
      MemorySegment w = pfds.asSlice(size, size);
      pollfd.fd(w, wakeFd);
      pollfd.events(w, (short) LibC.POLLIN());
      pollfd.revents(w, (short) 0);
    }
    try {
      // No timeout: stop() writes to the eventfd, and a child that goes away gives POLLERR.
      Syscalls.poll(pfds, 2, -1);
    } finally {
      synchronized (lock) {
        polling = false;
      }
    }
    return !stopped;
  }

  /**
   * Ends the pump: the pipe is closed at once (the child, if it still runs, reads end of file), a
   * wait in poll wakes, and a read of the stream is interrupted. Idempotent; never blocks.
   */
  void stop() {
    stopped = true;
    synchronized (lock) {
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
    if (thread != null && thread != Thread.currentThread()) {
      thread.interrupt();
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
    one.set(ValueLayout.JAVA_LONG, 0, 1L); // what an eventfd write adds to its counter
    return one;
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
