package dev.confine.linux.child;

/**
 * What an exec's child left behind besides how it ended: its captured output and how its stdin
 * stream went. Read once the exec is over ({@link Execution#runToCompletion}).
 */
public interface Captured {
  /**
   * The kept stdout bytes, handed over without a second copy: later calls return the same array,
   * which callers must not change.
   */
  byte[] takeStdout();

  /** As {@link #takeStdout()}, for stderr. */
  byte[] takeStderr();

  /** Whether stdout went past the cap. */
  boolean stdoutTruncated();

  /** Whether stderr went past the cap. */
  boolean stderrTruncated();

  /**
   * What the capture lost because the heap could not hold it (for example {@code "stdout: the JVM's
   * heap could hold only the first 1048576 bytes"}), or null when it lost nothing.
   */
  String captureFailure();

  /** Why the stdin stream could not be read to its end, or null. */
  Throwable stdinFailure();

  /** How many bytes of the stdin stream reached the child's pipe (0 without a stream). */
  long stdinWritten();

  /** Nanoseconds from the spawn to the child's reaping: its own time, without the drain. */
  long childNanos();
}
