package dev.confine.session;

import java.util.Locale;

/** A signal a client may send to a session through {@link ProcessSignaler}. */
public enum ProcessSignal {
  /**
   * Interrupt the foreground job: on a terminal the VINTR character (Ctrl-C), so the terminal
   * driver signals the foreground process group; on pipes SIGINT to the session's process group.
   */
  INTERRUPT;

  /** {@code interrupt}. */
  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
