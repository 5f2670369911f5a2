package dev.confine.linux.spawn;

/**
 * How a child ended, from waitid's siginfo.
 *
 * @param code the exit code, or -1 when a signal ended the child
 * @param signal the signal that ended the child, or 0 when it exited
 */
public record ExitStatus(int code, int signal) {
  private static final int CLD_EXITED = 1;
  private static final int CLD_KILLED = 2;
  private static final int CLD_DUMPED = 3;

  /** The status for waitid's {@code si_code} and {@code si_status}. */
  static ExitStatus fromSiginfo(int siCode, int siStatus) {
    return switch (siCode) {
      case CLD_EXITED -> new ExitStatus(siStatus, 0);
      case CLD_KILLED, CLD_DUMPED -> new ExitStatus(-1, siStatus);
      default -> throw new IllegalStateException("unexpected waitid si_code " + siCode);
    };
  }

  /** Whether a signal ended the child. */
  public boolean signaled() {
    return signal != 0;
  }
}
