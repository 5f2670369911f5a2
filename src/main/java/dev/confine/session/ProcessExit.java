package dev.confine.session;

import dev.confine.SandboxException;
import java.util.Locale;
import java.util.Objects;

/**
 * How a session's process ended.
 *
 * @param code the exit code of an ordinary exit; -1 otherwise
 * @param signal the signal that killed it, or 0
 * @param reason why it ended
 * @param error the failure a caller should see for this ending (TIMEOUT for {@link
 *     Reason#TIMED_OUT}, BUDGET_EXCEEDED, NOT_AVAILABLE for {@link Reason#UNENFORCEABLE}, INTERNAL
 *     when the exit could not be collected), or null for an ordinary ending
 */
public record ProcessExit(int code, int signal, Reason reason, SandboxException error) {
  /** Why a session's process ended. */
  public enum Reason {
    /** It exited by itself, with {@link #code()}. */
    EXITED,
    /** A signal killed it that the session did not send. */
    SIGNALED,
    /** {@link ProcessSession#terminate()} ended it. */
    TERMINATED,
    /** Its timeout elapsed and the tree was killed. */
    TIMED_OUT,
    /** A memory or CPU cap was exceeded and the tree was killed. */
    BUDGET_EXCEEDED,
    /** Its caps could no longer be enforced and the tree was killed. */
    UNENFORCEABLE;

    /** {@code exited}, {@code signaled}, {@code terminated}, {@code timed_out}, ... */
    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Checks the reason. */
  public ProcessExit {
    Objects.requireNonNull(reason, "reason");
  }

  /** An ordinary exit with {@code code}. */
  public static ProcessExit exited(int code) {
    return new ProcessExit(code, 0, Reason.EXITED, null);
  }

  /** This exit, or its {@link #error()} thrown when it has one. */
  public ProcessExit orThrow() {
    if (error != null) {
      throw error;
    }
    return this;
  }
}
