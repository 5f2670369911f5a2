package dev.confine.linux.spawn;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.termios;
import dev.confine.linux.sys.ErrnoException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The user's terminal switched to raw mode (as cfmakeraw: no echo, no line editing, no signals from
 * keys, no output processing) while a session owns it, and put back exactly as it was by {@link
 * #close()}.
 */
public final class TerminalMode implements AutoCloseable {
  private final int fd;
  private final MemorySegment saved;
  private boolean restored;

  private TerminalMode(int fd, MemorySegment saved) {
    this.fd = fd;
    this.saved = saved;
  }

  /**
   * Switches the terminal at {@code fd} to raw mode.
   *
   * @throws ErrnoException when {@code fd} is not a terminal or its mode cannot be set
   */
  public static TerminalMode raw(int fd) {
    MemorySegment saved = termios.allocate(Arena.ofAuto());
    int r = LibC.tcgetattr(fd, saved);
    if (r != 0) {
      throw new ErrnoException("tcgetattr", LibC.ENOTTY());
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment raw = arena.allocate(termios.layout());
      raw.copyFrom(saved);
      LibC.cfmakeraw(raw);
      if (LibC.tcsetattr(fd, LibC.TCSAFLUSH(), raw) != 0) {
        throw new ErrnoException("tcsetattr", LibC.ENOTTY());
      }
    }
    return new TerminalMode(fd, saved);
  }

  /** Puts the terminal back into the mode it had. Idempotent. */
  @Override
  public synchronized void close() {
    if (!restored) {
      restored = true;
      LibC.tcsetattr(fd, LibC.TCSADRAIN(), saved);
    }
  }
}
