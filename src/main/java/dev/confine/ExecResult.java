package dev.confine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * The outcome of an exec that ran. A non-zero exit is a result, not an error.
 *
 * <p>The output is kept as bytes (the first {@code maxOutputBytes} of each stream; the child never
 * sees a short write); {@link #stdoutText()} and {@link #stderrText()} decode them as UTF-8 with
 * malformed input replaced. Byte arrays are copied in and out, so an instance never changes.
 *
 * @param exitCode the exit status, or -1 when a signal ended the child
 * @param signal the number of the signal that ended the child, or 0 when it exited
 * @param stdout the captured standard output
 * @param stderr the captured standard error
 * @param stdoutTruncated whether stdout went past the cap and was cut
 * @param stderrTruncated whether stderr went past the cap and was cut
 * @param wallTime how long the call took as its caller saw it: from the start of the spawn to the
 *     result, the wait for output that background processes held after the child exited (the drain,
 *     up to 2 s) and the killing of what was left included; ZERO when not measured
 * @param usage what the tree consumed, as far as measured (never null)
 * @param leftoversKilled whether processes the child left behind (holding its output open after it
 *     exited) were killed when the call returned
 * @param childTime how long the child itself ran: from its spawn to its reaping, without the drain
 *     and the kill that follow; ZERO when not measured. With {@link #wallTime()} it shows how long
 *     a call waited for processes the child left behind
 */
public record ExecResult(
    int exitCode,
    int signal,
    byte[] stdout,
    byte[] stderr,
    boolean stdoutTruncated,
    boolean stderrTruncated,
    Duration wallTime,
    ResourceUsage usage,
    boolean leftoversKilled,
    Duration childTime) {

  private static final byte[] EMPTY = new byte[0];

  /**
   * Copies the arrays and applies defaults: null output is empty, a null wall or child time is
   * ZERO, null usage is {@link ResourceUsage#NOT_MEASURED}.
   *
   * @throws IllegalArgumentException for a negative signal, or a signal with an exit code other
   *     than -1
   */
  public ExecResult {
    if (signal < 0 || (signal > 0 && exitCode != -1)) {
      throw new IllegalArgumentException(
          "signal " + signal + " with exit code " + exitCode + " (a signalled child has code -1)");
    }
    stdout = stdout == null ? EMPTY : stdout.clone();
    stderr = stderr == null ? EMPTY : stderr.clone();
    wallTime = wallTime == null ? Duration.ZERO : wallTime;
    usage = usage == null ? ResourceUsage.NOT_MEASURED : usage;
    childTime = childTime == null ? Duration.ZERO : childTime;
  }

  /**
   * A result whose child time was not measured (ZERO): the canonical constructor before {@code
   * childTime} was added.
   *
   * @throws IllegalArgumentException as the canonical constructor
   */
  public ExecResult(
      int exitCode,
      int signal,
      byte[] stdout,
      byte[] stderr,
      boolean stdoutTruncated,
      boolean stderrTruncated,
      Duration wallTime,
      ResourceUsage usage,
      boolean leftoversKilled) {
    this(
        exitCode,
        signal,
        stdout,
        stderr,
        stdoutTruncated,
        stderrTruncated,
        wallTime,
        usage,
        leftoversKilled,
        Duration.ZERO);
  }

  /** An exit with {@code exitCode} and no output: a convenience for tests and fakes. */
  public static ExecResult ofExit(int exitCode) {
    return builder().exitCode(exitCode).build();
  }

  /** An exit with {@code exitCode} and the given output (UTF-8): a convenience for fakes. */
  public static ExecResult of(int exitCode, String stdout, String stderr) {
    return builder()
        .exitCode(exitCode)
        .stdout(stdout.getBytes(StandardCharsets.UTF_8))
        .stderr(stderr.getBytes(StandardCharsets.UTF_8))
        .build();
  }

  /** A copy of the captured stdout bytes. */
  @Override
  public byte[] stdout() {
    return stdout.clone();
  }

  /** A copy of the captured stderr bytes. */
  @Override
  public byte[] stderr() {
    return stderr.clone();
  }

  /** The number of captured stdout bytes. */
  public int stdoutLength() {
    return stdout.length;
  }

  /** The number of captured stderr bytes. */
  public int stderrLength() {
    return stderr.length;
  }

  /** Stdout decoded as UTF-8, malformed input replaced with U+FFFD. */
  public String stdoutText() {
    return new String(stdout, StandardCharsets.UTF_8);
  }

  /** Stderr decoded as UTF-8, malformed input replaced with U+FFFD. */
  public String stderrText() {
    return new String(stderr, StandardCharsets.UTF_8);
  }

  /** Whether a signal ended the child. */
  public boolean signaled() {
    return signal != 0;
  }

  /** A builder starting from this result. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** A builder for an exit 0 with no output. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ExecResult r
        && exitCode == r.exitCode
        && signal == r.signal
        && Arrays.equals(stdout, r.stdout)
        && Arrays.equals(stderr, r.stderr)
        && stdoutTruncated == r.stdoutTruncated
        && stderrTruncated == r.stderrTruncated
        && wallTime.equals(r.wallTime)
        && usage.equals(r.usage)
        && leftoversKilled == r.leftoversKilled
        && childTime.equals(r.childTime);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        exitCode,
        signal,
        Arrays.hashCode(stdout),
        Arrays.hashCode(stderr),
        stdoutTruncated,
        stderrTruncated,
        wallTime,
        usage,
        leftoversKilled,
        childTime);
  }

  @Override
  public String toString() {
    return "ExecResult[exitCode="
        + exitCode
        + ", signal="
        + signal
        + ", stdout="
        + stdout.length
        + " bytes"
        + (stdoutTruncated ? " (truncated)" : "")
        + ", stderr="
        + stderr.length
        + " bytes"
        + (stderrTruncated ? " (truncated)" : "")
        + ", wallTime="
        + wallTime
        + ", childTime="
        + childTime
        + ", usage="
        + usage
        + (leftoversKilled ? ", leftoversKilled" : "")
        + "]";
  }

  /** Builds an {@link ExecResult}. */
  public static final class Builder {
    private int exitCode;
    private int signal;
    private byte[] stdout = EMPTY;
    private byte[] stderr = EMPTY;
    private boolean stdoutTruncated;
    private boolean stderrTruncated;
    private Duration wallTime = Duration.ZERO;
    private ResourceUsage usage = ResourceUsage.NOT_MEASURED;
    private boolean leftoversKilled;
    private Duration childTime = Duration.ZERO;

    private Builder() {}

    private Builder(ExecResult r) {
      exitCode = r.exitCode;
      signal = r.signal;
      stdout = r.stdout;
      stderr = r.stderr;
      stdoutTruncated = r.stdoutTruncated;
      stderrTruncated = r.stderrTruncated;
      wallTime = r.wallTime;
      usage = r.usage;
      leftoversKilled = r.leftoversKilled;
      childTime = r.childTime;
    }

    /** Sets the exit code (and clears the signal). */
    public Builder exitCode(int exitCode) {
      this.exitCode = exitCode;
      this.signal = 0;
      return this;
    }

    /** Marks the child as ended by {@code signal}: exit code -1. */
    public Builder signal(int signal) {
      this.exitCode = -1;
      this.signal = signal;
      return this;
    }

    /** Sets the captured stdout (not copied until {@link #build()}). */
    public Builder stdout(byte[] stdout) {
      this.stdout = stdout;
      return this;
    }

    /** Sets the captured stderr (not copied until {@link #build()}). */
    public Builder stderr(byte[] stderr) {
      this.stderr = stderr;
      return this;
    }

    /** Sets whether stdout was cut at the cap. */
    public Builder stdoutTruncated(boolean truncated) {
      this.stdoutTruncated = truncated;
      return this;
    }

    /** Sets whether stderr was cut at the cap. */
    public Builder stderrTruncated(boolean truncated) {
      this.stderrTruncated = truncated;
      return this;
    }

    /** Sets the wall time: the whole call, the drain included. */
    public Builder wallTime(Duration wallTime) {
      this.wallTime = wallTime;
      return this;
    }

    /** Sets the child time: from the child's spawn to its reaping. */
    public Builder childTime(Duration childTime) {
      this.childTime = childTime;
      return this;
    }

    /** Sets the measured usage. */
    public Builder usage(ResourceUsage usage) {
      this.usage = usage;
      return this;
    }

    /** Sets whether leftover processes were killed. */
    public Builder leftoversKilled(boolean leftoversKilled) {
      this.leftoversKilled = leftoversKilled;
      return this;
    }

    /** The result. */
    public ExecResult build() {
      return new ExecResult(
          exitCode,
          signal,
          stdout,
          stderr,
          stdoutTruncated,
          stderrTruncated,
          wallTime,
          usage,
          leftoversKilled,
          childTime);
    }
  }
}
