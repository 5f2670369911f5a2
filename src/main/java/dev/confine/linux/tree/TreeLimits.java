package dev.confine.linux.tree;

/**
 * The caps on one process tree, in the engine's units. Zero means "no cap"; with none the tree's
 * cgroup only tracks it (tree kill, leftovers).
 *
 * @param memoryBytes the tree's memory
 * @param maxProcesses the tree's processes and threads
 * @param cpuThrottleMillicores throttle the tree to this share of a core (a CPU controller's
 *     quota); independent of the budget
 * @param cpuBudgetNanos kill the tree once it has used this much CPU time
 */
public record TreeLimits(
    long memoryBytes, int maxProcesses, int cpuThrottleMillicores, long cpuBudgetNanos) {
  /** No caps: a tree cgroup that only tracks the tree. */
  public static final TreeLimits NONE = new TreeLimits(0, 0, 0, 0);

  /** Whether any cap is set. */
  public boolean any() {
    return memoryBytes > 0 || maxProcesses > 0 || cpuThrottleMillicores > 0 || cpuBudgetNanos > 0;
  }
}
