package dev.confine.linux.tree;

/**
 * What a process tree consumed. A field that was not measured is -1.
 *
 * @param peakMemoryBytes the tree's peak memory
 * @param cpuUserNanos user CPU time of the whole tree
 * @param cpuSystemNanos system CPU time of the whole tree
 * @param pidsLimitHit whether a fork failed at the process cap
 */
public record TreeUsage(
    long peakMemoryBytes, long cpuUserNanos, long cpuSystemNanos, boolean pidsLimitHit) {
  /** Nothing measured. */
  public static final TreeUsage NOT_MEASURED = new TreeUsage(-1, -1, -1, false);
}
