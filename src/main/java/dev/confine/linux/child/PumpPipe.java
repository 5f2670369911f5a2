package dev.confine.linux.child;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.pollfd;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A pump thread's end of one of a child's pipes ({@link StdinPump}, {@link OutputPump}), with the
 * eventfd that wakes the thread from {@code poll}. The pipe's fd is closed exactly once, under the
 * lock, by whichever of {@link #stop} and {@link #close} comes first, and every read and write
 * happens under the lock after checking it is open, so none can reach another file that reused the
 * fd's number. A thread waiting in {@link #await} polls the pipe and the eventfd; {@link #stop}
 * then only writes to the eventfd, which the waiting thread closes when it wakes ({@link #close}),
 * and otherwise closes it at once. Thread-safe.
 */
final class PumpPipe {
  private static final MemorySegment ONE = one();

  private final Object lock = new Object();
  private int pipeFd; // -1 once closed
  private int wakeFd; // -1 once closed
  private boolean polling; // a thread waits in poll on wakeFd
  private volatile boolean stopped;

  private PumpPipe(int pipeFd, int wakeFd) {
    this.pipeFd = pipeFd;
    this.wakeFd = wakeFd;
  }

  /**
   * The pump's end of {@code pipeFd} (non-blocking from now on, owned by this from the call on).
   *
   * @throws ErrnoException when no eventfd can be made; {@code pipeFd} is then still the caller's
   */
  static PumpPipe open(int pipeFd) {
    int wake = Syscalls.eventfd(0, LibC.EFD_CLOEXEC() | LibC.EFD_NONBLOCK());
    if (wake < 0) {
      throw new ErrnoException("eventfd", -wake);
    }
    Syscalls.setNonBlocking(pipeFd);
    return new PumpPipe(pipeFd, wake);
  }

  /** {@code read(2)} of up to {@code n} bytes into {@code buf}; {@code -EBADF} once closed. */
  long read(MemorySegment buf, long n) {
    synchronized (lock) {
      return pipeFd < 0 ? -LibC.EBADF() : Syscalls.read(pipeFd, buf, n);
    }
  }

  /** {@code write(2)} of {@code n} bytes of {@code buf}; {@code -EBADF} once closed. */
  long write(MemorySegment buf, long n) {
    synchronized (lock) {
      return pipeFd < 0 ? -LibC.EBADF() : Syscalls.write(pipeFd, buf, n);
    }
  }

  /**
   * Waits until the pipe is ready for {@code events} (or has failed or ended), or {@link #stop} is
   * called.
   *
   * @param pfds room for two {@code pollfd}s
   * @return false once stopped
   */
  boolean await(int events, MemorySegment pfds) {
    long size = pollfd.sizeof();
    synchronized (lock) {
      if (stopped || pipeFd < 0) {
        return false;
      }
      polling = true;
      MemorySegment p = pfds.asSlice(0, size);
      pollfd.fd(p, pipeFd);
      pollfd.events(p, (short) events);
      pollfd.revents(p, (short) 0);
      MemorySegment w = pfds.asSlice(size, size);
      pollfd.fd(w, wakeFd);
      pollfd.events(w, (short) LibC.POLLIN());
      pollfd.revents(w, (short) 0);
    }
    try {
      // No timeout: stop() writes to the eventfd, and the pipe's far end going away wakes it too.
      Syscalls.poll(pfds, 2, -1);
    } finally {
      synchronized (lock) {
        polling = false;
      }
    }
    return !stopped;
  }

  /** Whether {@link #stop} was called. */
  boolean stopped() {
    return stopped;
  }

  /**
   * Closes the pipe at once (the child, if it still runs, sees its end) and wakes a thread waiting
   * in {@link #await}. Idempotent; never blocks.
   */
  void stop() {
    stopped = true;
    synchronized (lock) {
      if (pipeFd >= 0) {
        Syscalls.close(pipeFd);
        pipeFd = -1;
      }
      if (polling) {
        Syscalls.write(wakeFd, ONE, 8); // the waiting thread closes it when it wakes
      } else if (wakeFd >= 0) {
        Syscalls.close(wakeFd);
        wakeFd = -1;
      }
    }
  }

  /**
   * Hands the pipe back to the caller unclosed and closes the eventfd: for a pump whose thread
   * never started. Nothing else may use this afterwards.
   */
  void giveBack() {
    synchronized (lock) {
      pipeFd = -1;
      if (wakeFd >= 0) {
        Syscalls.close(wakeFd);
        wakeFd = -1;
      }
    }
  }

  /** Closes whatever is still open; for the pump's thread when it ends. Idempotent. */
  void close() {
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

  /** The 8 bytes that add 1 to an eventfd's counter. */
  static MemorySegment eventfdOne() {
    return ONE;
  }
}
