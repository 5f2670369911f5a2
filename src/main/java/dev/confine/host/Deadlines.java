package dev.confine.host;

import java.time.Duration;

/**
 * {@link System#nanoTime()} deadlines from timeouts, saturating: the one conversion the runners'
 * exec timeouts, the sessions' reads and waits and the test doubles share. Pure Java.
 */
public final class Deadlines {
  private Deadlines() {}

  /** The deadline {@code timeout} from now; see {@link #after(long, Duration)}. */
  public static long fromNow(Duration timeout) {
    return after(System.nanoTime(), timeout);
  }

  /**
   * The deadline {@code timeout} after {@code now}: {@code now} itself for a negative timeout (a
   * wait that is already over), {@link Long#MAX_VALUE} (no deadline) where it would overflow.
   */
  public static long after(long now, Duration timeout) {
    if (timeout.isNegative()) {
      return now;
    }
    long nanos;
    try {
      nanos = timeout.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
    long deadline = now + nanos;
    return deadline < now ? Long.MAX_VALUE : deadline;
  }
}
