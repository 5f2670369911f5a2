package dev.confine.linux.tree;

/**
 * A cap whose breach kills the tree, as a guard reports it ({@link TreeGuard#exceeded()}). The
 * process cap and the CPU throttle are not here: the kernel holds a tree to them without a kill.
 */
public enum Cap {
  /** The memory cap: the tree's memory reached it (or the cgroup's OOM killer struck). */
  MEMORY("memory"),
  /** The CPU budget: the tree's CPU time spent it. */
  CPU("cpu");

  private final String word;

  Cap(String word) {
    this.word = word;
  }

  /** What messages call it: {@code memory}, {@code cpu}. */
  public String word() {
    return word;
  }

  /** How a message says it was exceeded: "memory resource cap exceeded". */
  public String exceededMessage() {
    return word + " resource cap exceeded";
  }
}
