package dev.confine.testing;

import dev.confine.SandboxException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** The failure a call must end in, for tests that then look at its kind, message or output. */
public final class Thrown {
  private Thrown() {}

  /**
   * The {@link SandboxException} {@code call} throws.
   *
   * @throws AssertionError when it throws nothing, or something else
   */
  public static SandboxException sandbox(ThrowingCallable call) {
    try {
      call.call();
    } catch (SandboxException e) {
      return e;
    } catch (Throwable t) {
      throw new AssertionError("expected a SandboxException, got " + t, t);
    }
    throw new AssertionError("expected a SandboxException, got none");
  }
}
