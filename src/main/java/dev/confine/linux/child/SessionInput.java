package dev.confine.linux.child;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.pollfd;
import dev.confine.linux.spawn.Pty;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The input of a {@link SessionProcess}'s child: the stdin pipe, or a duplicate of the pty master
 * (its window size and control characters too). Callers use the fd under a lock, so that it is
 * never closed under a writer; the loop is not involved. Thread-safe.
 */
public final class SessionInput {
  private static final int WRITE_POLL_MILLIS = 50;

  private final ReentrantLock inputLock = new ReentrantLock();
  private int inputFd; // under inputLock; -1 once closed

  SessionInput(int inputFd) {
    this.inputFd = inputFd;
  }

  /**
   * Writes all of {@code data} to the child's input, waiting while the pipe or terminal is full.
   *
   * @throws ErrnoException when the input is closed or the write fails (EPIPE: the child stopped
   *     reading; EIO: the terminal is gone)
   */
  public void write(byte[] data) throws InterruptedException {
    inputLock.lockInterruptibly();
    try (Arena arena = Arena.ofConfined()) {
      if (inputFd < 0) {
        throw new ErrnoException("write", LibC.EPIPE());
      }
      MemorySegment buf = arena.allocate(Math.min(data.length, 64 * 1024));
      MemorySegment pfd = pollfd.allocate(arena);
      int offset = 0;
      while (offset < data.length) {
        int chunk = (int) Math.min(buf.byteSize(), data.length - offset);
        MemorySegment.copy(data, offset, buf, ValueLayout.JAVA_BYTE, 0, chunk);
        long n = Syscalls.write(inputFd, buf, chunk);
        if (n > 0) {
          offset += (int) n;
        } else if (n == -LibC.EAGAIN()) {
          awaitWritable(pfd);
        } else if (n != -LibC.EINTR()) {
          throw new ErrnoException("write", (int) -n);
        }
      }
    } finally {
      inputLock.unlock();
    }
  }

  private void awaitWritable(MemorySegment pfd) throws InterruptedException {
    // Polled in slices so that an interrupt is noticed; the loop is not involved in writing.
    pollfd.fd(pfd, inputFd);
    pollfd.events(pfd, (short) LibC.POLLOUT());
    while (true) {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      int r = Syscalls.poll(pfd, 1, WRITE_POLL_MILLIS);
      if (r > 0) {
        return; // writable, or an error the next write reports
      }
    }
  }

  /** Closes the child's input (a pipe session's stdin); later writes fail with EPIPE. */
  public void close() {
    inputLock.lock();
    try {
      if (inputFd >= 0) {
        Syscalls.close(inputFd);
        inputFd = -1;
      }
    } finally {
      inputLock.unlock();
    }
  }

  /**
   * Sets the pty's window size.
   *
   * @throws ErrnoException when the session has no terminal any more or the ioctl fails
   */
  public void resize(int rows, int cols) {
    inputLock.lock();
    try {
      if (inputFd < 0) {
        throw new ErrnoException("ioctl(TIOCSWINSZ)", LibC.EIO());
      }
      Pty.setSize(inputFd, rows, cols);
    } finally {
      inputLock.unlock();
    }
  }

  /** A control character of the terminal's, which a session types on the user's behalf. */
  public enum Control {
    /** VINTR, Ctrl-C unless the child changed it: the foreground group gets SIGINT. */
    INTERRUPT,
    /** VEOF, Ctrl-D unless the child changed it: a reading program sees end of file. */
    EOF
  }

  /** Writes the terminal's current {@code control} character, as {@link #write} writes. */
  public void type(Control control) throws InterruptedException {
    write(new byte[] {controlChar(control)});
  }

  /** The terminal's current {@code control} character; its default once the input is closed. */
  public byte controlChar(Control control) {
    inputLock.lock();
    try {
      boolean intr = control == Control.INTERRUPT;
      if (inputFd < 0) {
        return intr ? (byte) 0x03 : (byte) 0x04;
      }
      return intr ? Pty.interruptChar(inputFd) : Pty.eofChar(inputFd);
    } finally {
      inputLock.unlock();
    }
  }
}
