package dev.confine.linux;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * One platform thread that polls every watched tree's counters (CPU time, OOM kills) and lets each
 * tree's check kill it on a breach. Cheap: a few small cgroup files per tree per tick.
 */
final class CapWatch {
  /** A tree's check, run on the watch thread every tick until it returns false. */
  @FunctionalInterface
  interface Check {
    /** Checks once; false stops the checking (the tree was killed or is done). */
    boolean poll();
  }

  static final long INTERVAL_NANOS = 20_000_000L;
  private static final Set<Check> CHECKS = ConcurrentHashMap.newKeySet();
  private static final Thread THREAD =
      Thread.ofPlatform().name("confine-cap-watch").daemon().unstarted(CapWatch::run);

  static {
    THREAD.start();
  }

  private CapWatch() {}

  static void add(Check check) {
    // Only an idle watch needs waking; a busy one finds the new check at its next tick.
    boolean idle = CHECKS.isEmpty();
    CHECKS.add(check);
    if (idle) {
      LockSupport.unpark(THREAD);
    }
  }

  static void remove(Check check) {
    CHECKS.remove(check);
  }

  private static void run() {
    while (true) {
      if (CHECKS.isEmpty()) {
        LockSupport.park();
        continue;
      }
      // The first look comes a tick after the check was added, not while its child is being
      // spawned: a breach in the first tick is caught at its end.
      LockSupport.parkNanos(INTERVAL_NANOS);
      for (Check c : CHECKS) {
        boolean keep;
        try {
          keep = c.poll();
        } catch (RuntimeException e) {
          keep = false;
        }
        if (!keep) {
          CHECKS.remove(c);
        }
      }
    }
  }
}
