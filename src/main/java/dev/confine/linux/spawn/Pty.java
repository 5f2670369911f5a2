package dev.confine.linux.spawn;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.termios;
import dev.confine.linux.libc.winsize;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Pseudo-terminals: a new pty's master, its window size and its control characters. The master is
 * opened from {@code /dev/ptmx} with O_CLOEXEC (openpty's fds are inherited by any other thread's
 * spawn); the slave is only ever opened by the child, so the master reads EIO once the child's
 * session has let go of the terminal.
 */
public final class Pty {
  private Pty() {}

  /**
   * A new pty.
   *
   * @param master the master side (O_RDWR, O_NOCTTY, O_CLOEXEC), owned by the caller
   * @param slavePath the slave side's path, {@code /dev/pts/N}
   */
  public record Opened(int master, String slavePath) {}

  /**
   * Opens a new pty whose window is {@code rows} x {@code cols}.
   *
   * @throws ErrnoException when the pty cannot be opened or set up (the master is closed then)
   */
  public static Opened open(int rows, int cols) {
    int master = Syscalls.open("/dev/ptmx", LibC.O_RDWR() | LibC.O_NOCTTY() | LibC.O_CLOEXEC());
    if (master < 0) {
      throw new ErrnoException("open(/dev/ptmx)", -master);
    }
    try {
      int r = Syscalls.grantpt(master);
      if (r < 0) {
        throw new ErrnoException("grantpt", -r);
      }
      r = Syscalls.unlockpt(master);
      if (r < 0) {
        throw new ErrnoException("unlockpt", -r);
      }
      String slave;
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment buf = arena.allocate(128);
        r = LibC.ptsname_r(master, buf, buf.byteSize()); // returns the error number itself
        if (r != 0) {
          throw new ErrnoException("ptsname_r", r);
        }
        slave = buf.getString(0);
      }
      setSize(master, rows, cols);
      return new Opened(master, slave);
    } catch (RuntimeException e) {
      Syscalls.close(master);
      throw e;
    }
  }

  /**
   * Sets the window size of the terminal open at {@code fd} (TIOCSWINSZ); its foreground process
   * group receives SIGWINCH.
   *
   * @throws ErrnoException when the ioctl fails
   */
  public static void setSize(int fd, int rows, int cols) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment ws = winsize.allocate(arena);
      winsize.ws_row(ws, (short) rows);
      winsize.ws_col(ws, (short) cols);
      int r = Syscalls.ioctl(fd, LibC.TIOCSWINSZ(), ws);
      if (r < 0) {
        throw new ErrnoException("ioctl(TIOCSWINSZ)", -r);
      }
    }
  }

  /**
   * The window size of the terminal open at {@code fd} (TIOCGWINSZ).
   *
   * @return {rows, cols}
   * @throws ErrnoException when {@code fd} is not a terminal
   */
  public static int[] size(int fd) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment ws = winsize.allocate(arena);
      int r = Syscalls.ioctl(fd, LibC.TIOCGWINSZ(), ws);
      if (r < 0) {
        throw new ErrnoException("ioctl(TIOCGWINSZ)", -r);
      }
      return new int[] {
        Short.toUnsignedInt(winsize.ws_row(ws)), Short.toUnsignedInt(winsize.ws_col(ws))
      };
    }
  }

  /**
   * The terminal's interrupt character (VINTR, normally Ctrl-C); 0x03 when it cannot be read or is
   * disabled, which is what a terminal driver in its default settings uses.
   */
  public static byte interruptChar(int fd) {
    return controlChar(fd, LibC.VINTR(), (byte) 0x03);
  }

  /** The terminal's end-of-file character (VEOF, normally Ctrl-D), or 0x04. */
  public static byte eofChar(int fd) {
    return controlChar(fd, LibC.VEOF(), (byte) 0x04);
  }

  private static byte controlChar(int fd, int index, byte fallback) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment t = termios.allocate(arena);
      if (LibC.tcgetattr(fd, t) != 0) {
        return fallback;
      }
      byte c = termios.c_cc(t, index);
      return c == 0 ? fallback : c; // _POSIX_VDISABLE
    }
  }

  /** Whether {@code fd} is a terminal. */
  public static boolean isTerminal(int fd) {
    try (Arena arena = Arena.ofConfined()) {
      return LibC.tcgetattr(fd, termios.allocate(arena)) == 0;
    }
  }
}
