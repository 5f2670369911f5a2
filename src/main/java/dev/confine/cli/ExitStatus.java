package dev.confine.cli;

import dev.confine.ExecResult;
import dev.confine.PathTraversalException;
import dev.confine.SandboxException;

/**
 * The exit status of {@code confine exec} without {@code --json}, chosen the way {@code env} and
 * {@code timeout} choose theirs, so that scripts can tell the child's status from Confine's.
 *
 * <table>
 *   <caption>Exit statuses</caption>
 *   <tr><th>status</th><th>meaning</th></tr>
 *   <tr><td>the child's</td><td>the child exited</td></tr>
 *   <tr><td>128+N</td><td>signal N ended the child</td></tr>
 *   <tr><td>124</td><td>the timeout expired (TIMEOUT)</td></tr>
 *   <tr><td>125</td><td>Confine failed or refused: a work dir outside the root, a policy this host
 *       cannot enforce, any other kind</td></tr>
 *   <tr><td>126</td><td>the command cannot be run (FORBIDDEN, but for the work dir)</td></tr>
 *   <tr><td>127</td><td>the command was not found (NOT_FOUND)</td></tr>
 *   <tr><td>2</td><td>usage error (see {@link UsageErrorHandler})</td></tr>
 * </table>
 */
final class ExitStatus {
  /** The command line was wrong; nothing ran. */
  static final int USAGE = 2;

  /** The timeout expired, as {@code timeout} reports it. */
  static final int TIMEOUT = 124;

  /**
   * Confine itself failed or refused, as {@code timeout} and {@code env} report their own errors.
   */
  static final int CONFINE_FAILED = 125;

  /** The command was found but cannot be run, as shells and {@code env} report it. */
  static final int CANNOT_RUN = 126;

  /** The command was not found, as shells and {@code env} report it. */
  static final int NOT_FOUND = 127;

  /**
   * The exit statuses as the help of {@code confine}, {@code exec} and {@code shell} shows them.
   */
  static final String HELP =
      "Exit status (exec and shell, without --json):%n"
          + "  N        CMD exited with status N%n"
          + "  128+N    CMD was killed by signal N%n"
          + "  124      the timeout expired%n"
          + "  125      Confine failed or refused to run CMD (a work dir outside the root, a"
          + " policy this host cannot enforce, an unusable --cgroup-parent, ...)%n"
          + "  126      CMD cannot be run (not executable)%n"
          + "  127      CMD was not found%n"
          + "  2        the command line is wrong (one line on stderr says what)%n"
          + "With --json the status is 0 whenever the JSON was printed, 2 on a usage error;"
          + " doctor exits 0, or 125 when it cannot make the runner the options describe.";

  private ExitStatus() {}

  /** The status for {@code outcome}. */
  static int of(Outcome outcome) {
    if (outcome.error() instanceof PathTraversalException) {
      return CONFINE_FAILED; // the work dir was refused: CMD itself might run fine
    }
    if (outcome.error() != null) {
      return of(outcome.error().kind());
    }
    ExecResult r = outcome.result();
    return r.signaled() ? 128 + r.signal() : r.exitCode();
  }

  static int of(SandboxException.Kind kind) {
    return switch (kind) {
      case TIMEOUT -> TIMEOUT;
      case NOT_FOUND -> NOT_FOUND;
      case FORBIDDEN -> CANNOT_RUN;
      default -> CONFINE_FAILED;
    };
  }
}
