package dev.confine.session;

import java.util.Locale;

/** Which output of a session a chunk of bytes came from. */
public enum ProcessStream {
  /** The standard output of a pipe session. */
  STDOUT,
  /** The standard error of a pipe session. */
  STDERR,
  /** The terminal of a PTY session (its stdout and stderr, merged by the terminal). */
  TTY;

  /** {@code stdout}, {@code stderr} or {@code tty}. */
  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
