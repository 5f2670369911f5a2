package dev.confine.linux.cgroup;

import dev.confine.linux.tree.TreeLimits;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The idle tree cgroups of one {@link Cgroups}, kept for the next tree instead of made and removed
 * per tree: on v1 emptied and reset by the {@link CgroupJanitor} and keyed by their controllers; on
 * v2 only trackers (no caps), which have nothing to reset. Thread-safe.
 */
public final class CgroupPool {
  /**
   * How many idle tree cgroups with caps are kept for reuse at most; beyond it they are removed.
   */
  public static final int MAX_IDLE = 16;

  /**
   * How many idle tracker cgroups (no caps: a freezer directory and one open file each) are kept at
   * most, apart from {@link #MAX_IDLE}: every exec takes one, so a burst of concurrent execs from
   * virtual threads finds them made instead of making and removing one per exec.
   */
  public static final int MAX_IDLE_TRACKERS = 64;

  // Idle v1 tree cgroups, emptied and reset, by their controllers: creating and removing the
  // directories of four hierarchies per exec is costly kernel work (docs/benchmarks.md).
  private final Map<List<String>, Deque<V1TreeCgroup>> idle = new ConcurrentHashMap<>();
  private final AtomicInteger idleCount = new AtomicInteger();
  private final AtomicInteger idleTrackers = new AtomicInteger();
  // Idle v2 tracker cgroups (no caps, nothing to reset): mkdir and rmdir per exec are not free.
  private final Deque<V2TreeCgroup> idleV2Trackers = new ConcurrentLinkedDeque<>();
  private final boolean useV2;

  /** An empty pool for the tree cgroups of the v2 hierarchy ({@code useV2}) or the v1 ones. */
  CgroupPool(boolean useV2) {
    this.useV2 = useV2;
  }

  /**
   * An idle cgroup for a tree with {@code limits}, taken from the pool with them written: on v1 one
   * with the same controllers, on v2 a tracker for a tree without caps; null when there is none.
   */
  TreeCgroup take(TreeLimits limits) {
    if (!useV2) {
      Deque<V1TreeCgroup> pool = idle.get(V1TreeCgroup.controllersFor(limits));
      V1TreeCgroup cg;
      while (pool != null && (cg = pool.pollFirst()) != null) {
        (limits.any() ? idleCount : idleTrackers).decrementAndGet();
        if (cg.reuse(limits)) {
          return cg;
        }
        CgroupJanitor.remove(cg);
      }
    }
    if (useV2 && !limits.any()) {
      V2TreeCgroup cg = idleV2Trackers.pollFirst();
      if (cg != null) {
        idleTrackers.decrementAndGet();
        return cg;
      }
    }
    return null;
  }

  /**
   * Hands back the cgroup of a tree that is over ({@code knownEmpty}: the guard saw it empty after
   * the tree, so nothing needs killing). On v1 the janitor empties and resets it off the exec's
   * path and keeps it for the next tree with the same controllers ({@link #MAX_IDLE} at most, each
   * reused {@value V1TreeCgroup#MAX_USES} times at most); on v2 an empty tracker is kept as it is
   * ({@link #MAX_IDLE_TRACKERS} at most, with v1's); otherwise it is removed.
   */
  void release(TreeCgroup cg, boolean knownEmpty) {
    if (cg instanceof V1TreeCgroup v1) {
      v1.closePlacementFiles(); // never spawned into (the program was not found): still open
      if (v1.reusableAsIs(knownEmpty) && keepIdle(v1)) {
        return; // a tracker with nothing to reset: idle again at once (see reusableAsIs)
      }
      CgroupJanitor.recycle(v1, knownEmpty, this::keepIdle);
    } else if (cg instanceof V2TreeCgroup v2
        && knownEmpty
        && v2.tracksOnly()
        && !v2.wasKilled()
        && keepIdle(v2)) {
      return; // empty, no counters a tracker reports, never killed: reused as it is
    } else {
      CgroupJanitor.remove(cg);
    }
  }

  private boolean keepIdle(V2TreeCgroup cg) {
    if (CgroupJanitor.exiting()) {
      return false;
    }
    if (idleTrackers.incrementAndGet() > MAX_IDLE_TRACKERS) {
      idleTrackers.decrementAndGet();
      return false;
    }
    idleV2Trackers.addFirst(cg);
    return true;
  }

  /** Keeps a recycled cgroup (on the janitor, or its releaser); false when enough are kept. */
  private boolean keepIdle(V1TreeCgroup cg) {
    if (CgroupJanitor.exiting()) {
      return false;
    }
    boolean tracker = !cg.limits().any();
    AtomicInteger count = tracker ? idleTrackers : idleCount;
    if (count.incrementAndGet() > (tracker ? MAX_IDLE_TRACKERS : MAX_IDLE)) {
      count.decrementAndGet();
      return false;
    }
    idle.computeIfAbsent(
            V1TreeCgroup.controllersFor(cg.limits()), k -> new ConcurrentLinkedDeque<>())
        .addFirst(cg);
    return true;
  }

  /**
   * Removes every idle tree cgroup of this instance (the janitor does); also when the JVM exits.
   */
  void removeIdle() {
    V2TreeCgroup v2;
    while ((v2 = idleV2Trackers.pollFirst()) != null) {
      idleTrackers.decrementAndGet();
      CgroupJanitor.remove(v2);
    }
    for (Deque<V1TreeCgroup> pool : idle.values()) {
      V1TreeCgroup cg;
      while ((cg = pool.pollFirst()) != null) {
        (cg.limits().any() ? idleCount : idleTrackers).decrementAndGet();
        CgroupJanitor.remove(cg);
      }
    }
  }
}
