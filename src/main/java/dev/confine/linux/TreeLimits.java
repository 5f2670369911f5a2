package dev.confine.linux;

/**
 * The caps on one process tree, in the engine's units. Zero means "no cap".
 *
 * @param memoryBytes the tree's memory
 * @param maxProcesses the tree's processes and threads
 * @param cpuMillicores throttle to this share of a core, where a CPU controller exists
 * @param cpuBudgetNanos kill the tree once it has used this much CPU time
 */
public record TreeLimits(
    long memoryBytes, int maxProcesses, int cpuMillicores, long cpuBudgetNanos) {
  /** No caps. */
  public static final TreeLimits NONE = new TreeLimits(0, 0, 0, 0);

  /** Whether any cap is set. */
  public boolean any() {
    return memoryBytes > 0 || maxProcesses > 0 || cpuMillicores > 0 || cpuBudgetNanos > 0;
  }
}
