package dev.confine.linux.child;

import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.tree.TreeGuard;

/**
 * How an exec's child is spawned and who watches it, chosen once per exec by {@link #of} (as the
 * JDK's {@code ProcessImpl} chooses its launch mechanism once). Where in the tree's cgroup the
 * child is born is the guard's business, not the strategy's.
 */
public enum SpawnStrategy {
  /**
   * The calling platform thread spawns (through its guard) and then polls the child's pidfd and
   * pipes itself while it waits: no hop through another thread on the way in or out.
   */
  CALLER_POLLS,
  /**
   * The calling thread spawns and the shared event loop watches the child: for virtual threads,
   * which must not block in poll, and for callers that do not wait for their child.
   */
  LOOP_WATCHES,
  /**
   * The guard's own thread (a confinement thread, {@link TreeGuard.HandedOff}) spawns with pipes
   * the caller made, and the calling platform thread polls them at once: it sleeps until the child
   * writes or exits, not until the spawn is over (which would make a third runnable thread while
   * the child starts). A spawn on a terminal is not handed off.
   */
  HANDED_OFF;

  /**
   * The strategy for {@code spec} under {@code guard}.
   *
   * @param callerWaits whether the calling thread waits for the child in {@link Execution} (false:
   *     the loop must watch it whatever the thread)
   */
  static SpawnStrategy of(SpawnSpec spec, TreeGuard guard, boolean callerWaits) {
    if (!callerWaits || Thread.currentThread().isVirtual()) {
      return LOOP_WATCHES;
    }
    return guard instanceof TreeGuard.HandedOff && spec.terminal() == null
        ? HANDED_OFF
        : CALLER_POLLS;
  }
}
