package dev.confine.cli;

import dev.confine.ExecResult;
import dev.confine.SandboxException;

/**
 * What one exec came to: a result, an error with the output so far, or an error before anything
 * ran. Both the plain and the JSON report are written from this.
 *
 * @param result the result, the error's partial result, or null when nothing ran
 * @param error the failure, or null when the child ran to its end
 */
record Outcome(ExecResult result, SandboxException error) {

  /** The child ran to its end (whatever its exit status). */
  static Outcome of(ExecResult result) {
    return new Outcome(result, null);
  }

  /** Confine failed; the output so far comes along when the error carries it. */
  static Outcome of(SandboxException error) {
    return new Outcome(error.partialResult().orElse(null), error);
  }
}
