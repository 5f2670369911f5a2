package dev.confine.host;

import dev.confine.ExecResult;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.child.ChildOutcome;
import java.time.Duration;
import java.util.Locale;

/**
 * How a child that ran ended, as an error, for an exec and a session alike: the one place that
 * decides which ending is which {@link Kind}, and in what order they are checked.
 */
final class Outcomes {
  private Outcomes() {}

  /** What ran, as the messages name it. */
  enum Subject {
    EXEC("executing %s", "exec %s: deadline exceeded (timeout %s)", "exec %s: %s"),
    SESSION("running process %s", "process %s exceeded its timeout (%s)", "process wait: %2$s");

    private final String doing;
    private final String timedOut;
    private final String unreaped;

    Subject(String doing, String timedOut, String unreaped) {
      this.doing = doing;
      this.timedOut = timedOut;
      this.unreaped = unreaped;
    }

    String doing(String cmd) {
      return String.format(Locale.ROOT, doing, cmd);
    }

    String timedOut(String cmd, Duration timeout) {
      return String.format(Locale.ROOT, timedOut, cmd, HostExec.format(timeout));
    }

    String unreaped(String cmd, String why) {
      return String.format(Locale.ROOT, unreaped, cmd, why);
    }
  }

  /**
   * What an exec's capture and stdin stream add to the checks: the output the heap could not hold
   * ({@code captureLost}), the stdin stream that failed ({@code stdinFailure} after {@code
   * stdinWritten} bytes). Null fields add nothing.
   */
  record Extras(String captureLost, Throwable stdinFailure, long stdinWritten) {
    static final Extras NONE = new Extras(null, null, 0);
  }

  /**
   * The error {@code o} ends in, or null for an ordinary end (an exit or a signal). Checked in this
   * order: caps that became unenforceable (NOT_AVAILABLE), output the heap lost (NOT_AVAILABLE), a
   * cap exceeded (BUDGET_EXCEEDED), a stdin stream that failed under a child that exited
   * (INTERNAL), the timeout (TIMEOUT), an interrupt (ABORTED), a child that could not be reaped
   * (INTERNAL).
   *
   * @param partial the exec's result, which the error carries, or null
   */
  static SandboxException failure(
      ChildOutcome o,
      Subject subject,
      String cmd,
      Duration timeout,
      Extras extras,
      ExecResult partial) {
    Failure f = classify(o, subject, cmd, timeout, extras);
    return f == null ? null : SandboxException.of(f.kind(), f.detail(), f.cause(), partial);
  }

  private record Failure(Kind kind, String detail, Throwable cause) {}

  private static Failure classify(
      ChildOutcome o, Subject subject, String cmd, Duration timeout, Extras extras) {
    if (o.unenforceable() != null) {
      return new Failure(
          Kind.NOT_AVAILABLE,
          "resource caps became unenforceable while "
              + subject.doing(cmd)
              + ": "
              + o.unenforceable().getMessage(),
          o.unenforceable());
    }
    if (extras.captureLost() != null) {
      return new Failure(
          Kind.NOT_AVAILABLE,
          "exec "
              + cmd
              + ": output capture stopped short of its cap, "
              + extras.captureLost()
              + " (the rest was read and dropped); lower maxOutputBytes, run fewer large execs at"
              + " once or give the JVM more heap",
          null);
    }
    if (o.exceeded() != null) {
      return new Failure(
          Kind.BUDGET_EXCEEDED,
          o.exceeded().exceededMessage() + " while " + subject.doing(cmd),
          null);
    }
    if (extras.stdinFailure() != null && o.ending() == ChildOutcome.Ending.EXITED) {
      return new Failure(
          Kind.INTERNAL,
          "exec "
              + cmd
              + ": reading its stdin stream failed after "
              + extras.stdinWritten()
              + " bytes ("
              + extras.stdinFailure()
              + "); the command read end of file there",
          extras.stdinFailure());
    }
    return switch (o.ending()) {
      case TIMED_OUT -> new Failure(Kind.TIMEOUT, subject.timedOut(cmd, timeout), null);
      case INTERRUPTED ->
          new Failure(
              Kind.ABORTED,
              "exec " + cmd + ": cancelled (the calling thread was interrupted)",
              null);
      case EXITED ->
          o.exit() == null
              ? new Failure(Kind.INTERNAL, subject.unreaped(cmd, o.reapFailure()), null)
              : null;
    };
  }
}
