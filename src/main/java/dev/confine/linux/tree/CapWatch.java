package dev.confine.linux.tree;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * One platform thread that polls every watched tree's counters (CPU time, OOM kills) and lets each
 * tree's check kill it on a breach. Cheap: a few small cgroup files per tree per tick.
 */
public final class CapWatch {
  /** A tree's check, run on the watch thread every tick until it returns false. */
  @FunctionalInterface
  public interface Check {
    /** Checks once; false stops the checking (the tree was killed or is done). */
    boolean poll();
  }

  static final long INTERVAL_NANOS = 20_000_000L;
  // Ticks kept after the last check went, so that back-to-back capped execs need no wake-up (an
  // unpark of a parked thread costs the caller an inter-processor interrupt).
  private static final int LINGER_TICKS = 50;
  private static volatile boolean parked;
  private static final Set<Check> CHECKS = ConcurrentHashMap.newKeySet();
  private static final Thread THREAD =
      Thread.ofPlatform().name("confine-cap-watch").daemon().unstarted(CapWatch::run);

  static {
    THREAD.start();
  }

  private CapWatch() {}

  public static void add(Check check) {
    CHECKS.add(check);
    // Only a parked watch needs waking; a ticking one finds the new check at its next tick.
    if (parked) {
      LockSupport.unpark(THREAD);
    }
  }

  public static void remove(Check check) {
    CHECKS.remove(check);
  }

  private static void run() {
    int idleTicks = 0;
    while (true) {
      if (CHECKS.isEmpty() && idleTicks >= LINGER_TICKS) {
        parked = true;
        if (CHECKS.isEmpty()) { // a check added before the flag was seen: no unpark came
          LockSupport.park();
        }
        parked = false;
        idleTicks = 0;
        continue;
      }
      // Ticks at a fixed pace, whenever checks came: a check is first looked at within a tick
      // of being added, so a CPU budget is read at most a tick late.
      LockSupport.parkNanos(INTERVAL_NANOS);
      if (CHECKS.isEmpty()) {
        idleTicks++;
        continue;
      }
      idleTicks = 0;
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
