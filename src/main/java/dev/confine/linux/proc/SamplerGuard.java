package dev.confine.linux.proc;

import dev.confine.linux.spawn.SpawnPlacement;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.Availability;
import dev.confine.linux.tree.Cap;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.linux.tree.TreeUsage;

/**
 * Tracks a tree without cgroups, and enforces its memory and CPU caps, by sampling it from /proc
 * ({@link ProcCapsWatcher}, {@link ProcSampler}): members by ancestry and by the sessions the tree
 * made, a last look when the leader has exited, and a kill that stops every member it finds before
 * it kills them. A fallback: caps can overshoot between samples, and a process that left every
 * known session and was orphaned before any sample saw it is out of its sight, which is why cgroups
 * come first. With no caps (both 0) it only tracks the tree.
 */
public final class SamplerGuard implements TreeGuard {
  private final long memoryCapBytes;
  private final long cpuBudgetNanos;
  private final TreeGuard tracker; // null: the sampler tracks the tree itself
  private ProcCapsWatcher.Handle handle;

  /** A guard for these caps (0 = none; with neither it only tracks the tree). */
  public SamplerGuard(long memoryCapBytes, long cpuBudgetNanos) {
    this(memoryCapBytes, cpuBudgetNanos, null);
  }

  /**
   * A guard for these caps whose tree is held by {@code tracker} (a cgroup without caps, where one
   * can be made but cannot cap memory): the tracker spawns, kills and finds leftovers, the sampler
   * enforces the caps; null for none (the sampler then tracks the tree too). The guard owns the
   * tracker.
   */
  public SamplerGuard(long memoryCapBytes, long cpuBudgetNanos, TreeGuard tracker) {
    this.memoryCapBytes = memoryCapBytes;
    this.cpuBudgetNanos = cpuBudgetNanos;
    this.tracker = tracker;
  }

  /**
   * Whether sampling works in this process, and if not why: one sample of the process's own tree
   * (the seed's probe, without ps), taken on every call.
   */
  public static Availability availability() {
    try {
      new ProcSampler((int) ProcessHandle.current().pid()).sample();
      return Availability.AVAILABLE;
    } catch (java.io.IOException | RuntimeException | LinkageError e) {
      return Availability.unavailable("sampling this process's tree in /proc failed: " + e);
    }
  }

  @Override
  public Spawner.Spawned spawn(SpawnSpec spec) {
    return tracker != null ? tracker.spawn(spec) : Spawner.spawn(spec);
  }

  @Override
  public SpawnPlacement placement() {
    return tracker != null ? tracker.placement() : SpawnPlacement.NONE;
  }

  @Override
  public synchronized void started(int pid) {
    if (tracker != null) {
      tracker.started(pid);
    }
    handle =
        ProcCapsWatcher.watch(
            pid,
            memoryCapBytes,
            cpuBudgetNanos,
            new ProcCapsWatcher.Listener() {
              @Override
              public void exceeded(Cap cap) {
                // read from the handle when the exec completes
              }

              @Override
              public void unenforceable(Throwable cause) {
                // read from the handle when the exec completes
              }
            });
  }

  @Override
  public void killTree() {
    if (tracker != null) {
      tracker.killTree();
      return;
    }
    ProcCapsWatcher.Handle h = handle();
    if (h != null) {
      h.killTree();
    }
  }

  /** The last look: whether anything of the tree is alive, its group included. */
  @Override
  public boolean hasProcesses() {
    if (tracker != null) {
      return tracker.hasProcesses();
    }
    ProcCapsWatcher.Handle h = handle();
    return h != null && h.lastLook();
  }

  /** Only with a cgroup tracker that does (see {@code CgroupGuard.holdsEveryProcess()}). */
  @Override
  public boolean holdsEveryProcess() {
    return tracker != null && tracker.holdsEveryProcess();
  }

  private synchronized ProcCapsWatcher.Handle handle() {
    return handle;
  }

  @Override
  public synchronized Cap exceeded() {
    return handle == null ? null : handle.exceeded();
  }

  @Override
  public synchronized Throwable unenforceable() {
    return handle == null ? null : handle.unenforceable();
  }

  @Override
  public synchronized TreeUsage usage() {
    if (handle == null || (memoryCapBytes == 0 && cpuBudgetNanos == 0)) {
      return TreeUsage.NOT_MEASURED; // tracking only: as an uncapped exec elsewhere, no figures
    }
    return new TreeUsage(
        handle.peakRssBytes(), handle.cpuUserNanos(), handle.cpuSystemNanos(), false);
  }

  @Override
  public synchronized void close() {
    if (handle != null) {
      handle.stop();
    }
    if (tracker != null) {
      tracker.close();
    }
  }
}
