package dev.confine;

import java.time.Duration;

/**
 * What the child's process tree consumed, as far as the backend measured it. A field the backend
 * did not measure is -1 (or null for the durations); see {@link #NOT_MEASURED}.
 *
 * @param peakMemoryBytes the tree's peak memory, or -1 when not measured
 * @param cpuUser the tree's user CPU time, or null when not measured
 * @param cpuSystem the tree's system CPU time, or null when not measured
 * @param pidsLimitHit whether a fork failed because the process cap was reached
 */
public record ResourceUsage(
    long peakMemoryBytes, Duration cpuUser, Duration cpuSystem, boolean pidsLimitHit) {

  /** Nothing measured. */
  public static final ResourceUsage NOT_MEASURED = new ResourceUsage(-1, null, null, false);

  /**
   * Checks the values.
   *
   * @throws IllegalArgumentException for a peak below -1 or a negative duration
   */
  public ResourceUsage {
    if (peakMemoryBytes < -1) {
      throw new IllegalArgumentException("peakMemoryBytes " + peakMemoryBytes + " < -1");
    }
    if ((cpuUser != null && cpuUser.isNegative())
        || (cpuSystem != null && cpuSystem.isNegative())) {
      throw new IllegalArgumentException("negative CPU time");
    }
  }
}
