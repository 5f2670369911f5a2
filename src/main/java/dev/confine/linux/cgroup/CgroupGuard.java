package dev.confine.linux.cgroup;

import dev.confine.linux.spawn.SpawnPlacement;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.EngineException;
import dev.confine.linux.tree.Cap;
import dev.confine.linux.tree.CapWatch;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.linux.tree.TreeLimits;
import dev.confine.linux.tree.TreeUsage;
import java.io.IOException;

/**
 * Holds a tree in its own cgroup: the kernel enforces memory and process caps and the CPU throttle;
 * the {@link CapWatch} thread kills the tree when its CPU budget is spent or the OOM killer struck;
 * killing and leftover detection cover every process in the cgroup, escapees from the process group
 * and the session included. With {@link TreeLimits#NONE} it only tracks the tree (every exec
 * without caps gets one where a cgroup can be made).
 */
public final class CgroupGuard implements TreeGuard {
  private static final int MAX_FAILURES = 3;
  private static final long KILL_WAIT_NANOS = 5_000_000_000L;

  private final Cgroups cgroups;
  private final TreeCgroup cgroup;
  private final long cpuBudgetNanos;
  private final boolean memoryCapped;
  private final boolean tracker;
  private final CapWatch.Check check = this::poll;
  private volatile Cap exceeded;
  private volatile Throwable unenforceable;
  private int failures;
  private TreeUsage finalUsage;
  private volatile boolean closed;
  private volatile boolean spawned;
  private volatile boolean watched;
  private boolean drained; // close emptied the cgroup
  private volatile boolean emptied; // seen empty after the spawn: no drain needed at close

  /**
   * Creates the tree's cgroup with {@code limits}.
   *
   * @throws EngineException when the cgroup cannot be created
   */
  public CgroupGuard(Cgroups cgroups, TreeLimits limits) {
    this.cgroups = cgroups;
    this.cpuBudgetNanos = limits.cpuBudgetNanos();
    this.memoryCapped = limits.memoryBytes() > 0;
    this.tracker = !limits.any();
    try {
      this.cgroup = cgroups.create(limits);
    } catch (IOException e) {
      throw new EngineException("cannot create the tree's cgroup", e);
    }
  }

  @Override
  public Spawner.Spawned spawn(SpawnSpec spec) {
    return cgroups.spawn(cgroup, spec);
  }

  @Override
  public SpawnPlacement placement() {
    return cgroups.placement(cgroup);
  }

  @Override
  public void started(int pid) {
    spawned = true;
    if (cpuBudgetNanos > 0 || memoryCapped) {
      watched = true;
      CapWatch.add(check);
    }
  }

  // Synchronized with close, and a no-op after it: a closed guard's cgroup may already serve
  // another tree (cgroups are reused), which a late tick or kill must never touch.
  private synchronized boolean poll() {
    if (closed) {
      return false;
    }
    try {
      if (memoryCapped && cgroup.oomKilled()) {
        exceeded = Cap.MEMORY;
      } else if (cpuBudgetNanos > 0 && cgroup.cpuUsageNanos() >= cpuBudgetNanos) {
        exceeded = Cap.CPU;
      } else {
        failures = 0;
        return true;
      }
    } catch (IOException | RuntimeException e) {
      if (++failures < MAX_FAILURES) {
        return true;
      }
      unenforceable = e;
    }
    killTree();
    return false;
  }

  @Override
  public synchronized void killTree() {
    if (closed) {
      return;
    }
    try {
      cgroup.kill();
    } catch (IOException e) {
      // the process group kill that accompanies this one still applies
    }
  }

  @Override
  public synchronized boolean hasProcesses() {
    if (closed) {
      return false;
    }
    try {
      boolean any = cgroup.hasProcesses();
      // Once the child was spawned, an empty cgroup stays empty: nothing is left inside to fork,
      // and this JVM moves threads in only while it spawns the child.
      emptied |= spawned && !any;
      return any;
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public synchronized Cap exceeded() {
    if (exceeded == null && memoryCapped && !closed) {
      try {
        // The leader can die of the OOM kill before a tick sees the counter.
        if (cgroup.oomKilled()) {
          exceeded = Cap.MEMORY;
        }
      } catch (IOException e) {
        // reported as not exceeded; the exit status stands
      }
    }
    return exceeded;
  }

  @Override
  public Throwable unenforceable() {
    return unenforceable;
  }

  @Override
  public synchronized TreeUsage usage() {
    if (tracker) {
      return TreeUsage.NOT_MEASURED; // as any exec without caps: a reused tracker counts on
    }
    return finalUsage != null ? finalUsage : cgroup.usage();
  }

  /**
   * True where the child starts in its cgroup (v1, v2 with CLONE_INTO_CGROUP) and close emptied it;
   * false for post-spawn placement, or when the cgroup could not be emptied.
   */
  @Override
  public synchronized boolean holdsEveryProcess() {
    return cgroups.placement() != Cgroups.Placement.POST_SPAWN && (!closed || drained);
  }

  /** The cgroup's directory, for messages and tests. */
  public java.nio.file.Path path() {
    return cgroup.path();
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    if (watched) {
      CapWatch.remove(check); // a tracker never starts the watch's thread
    }
    exceeded(); // the last look at the OOM counter, before the cgroup goes
    finalUsage = tracker ? TreeUsage.NOT_MEASURED : cgroup.usage();
    closed = true;
    boolean empty = emptied;
    if (!empty) {
      try {
        // Nothing of the tree outlives its exec or session: what is still in the cgroup (a killed
        // escapee not yet gone) is killed until the cgroup is empty before this returns; only the
        // recycling or removal of the empty cgroup happens later.
        TreeCgroup.killAndDrain(cgroup, KILL_WAIT_NANOS);
        empty = true;
      } catch (IOException e) {
        // the janitor tries again, and the next start's cleanup after it
      }
    }
    drained = empty;
    cgroups.release(cgroup, empty);
  }
}
