package dev.confine.linux.loop;

import java.util.concurrent.TimeUnit;

/**
 * When a client that reads a streaming session's outputs itself should poll them without sleeping
 * before it sleeps in {@code poll(2)}, and for how long. Not thread-safe: one per session, used
 * under its claim.
 *
 * <p>Why spin at all: a reader asleep in {@code poll} is woken by every write of the child, often
 * on the writing child's CPU, where it preempts the child; a short spin while output streams avoids
 * most of those preemptions (docs/benchmarks.md). The spin polls with a zero timeout rather than
 * reading, because {@code read} takes the pipe's lock, which the writing child needs.
 *
 * <p>What it costs is bounded: it spins only while output streams (the last read found some within
 * {@link #STREAMING_NANOS}), at most {@link #SPIN_NANOS} per wait, and after a spin that found
 * nothing (a child that writes now and then, not a stream) it skips the next 1, 2, 4, ... up to
 * {@link #SKIP_MAX} waits, so a trickling child costs a reader one spin per 65 waits at most; a
 * spin that finds output spins again the next time.
 */
public final class ReadSpin {
  /** The longest a reader polls without sleeping before one wait. */
  public static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(30);

  /** Output counts as streaming while the last of it came at most this long ago. */
  static final long STREAMING_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** The most waits skipped after spins that found nothing. */
  static final int SKIP_MAX = 64;

  private long lastOutput; // meaningful once seen: nanoTime has no "never" value
  private boolean seen;
  private int skip;
  private int skipLeft;

  /** A read found output at {@code now} ({@link System#nanoTime()}). */
  public void output(long now) {
    lastOutput = now;
    seen = true;
  }

  /**
   * Whether to spin (for {@link #SPIN_NANOS} at most) before the wait that starts at {@code now}
   * ({@link System#nanoTime()}) instead of sleeping at once. A yes must be followed by {@link
   * #spun}.
   */
  public boolean spinBefore(long now) {
    if (!seen || now - lastOutput >= STREAMING_NANOS) {
      return false;
    }
    if (skipLeft > 0) {
      skipLeft--;
      return false;
    }
    return true;
  }

  /** The spin that {@link #spinBefore} allowed ended, with output ({@code found}) or without. */
  public void spun(boolean found) {
    if (found) {
      skip = 0;
    } else {
      skip = Math.min(Math.max(1, 2 * skip), SKIP_MAX);
      skipLeft = skip;
    }
  }
}
