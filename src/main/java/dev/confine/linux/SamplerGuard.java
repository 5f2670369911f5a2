package dev.confine.linux;

/**
 * Enforces memory and CPU caps without cgroups, by sampling the tree from /proc ({@link
 * ProcCapsWatcher}): a fallback that can overshoot between samples and cannot see a process that
 * left the session unseen, which is why cgroups come first.
 */
public final class SamplerGuard implements TreeGuard {
  private final long memoryCapBytes;
  private final long cpuBudgetNanos;
  private ProcCapsWatcher.Handle handle;

  /** A guard for these caps (0 = none). */
  public SamplerGuard(long memoryCapBytes, long cpuBudgetNanos) {
    this.memoryCapBytes = memoryCapBytes;
    this.cpuBudgetNanos = cpuBudgetNanos;
  }

  /**
   * Whether sampling works in this process: one sample of the process's own tree (the seed's probe,
   * without ps).
   */
  public static boolean available() {
    try {
      new ProcSampler((int) ProcessHandle.current().pid()).sample();
      return true;
    } catch (java.io.IOException | RuntimeException | LinkageError e) {
      return false;
    }
  }

  @Override
  public Spawner.Spawned spawn(SpawnSpec spec) {
    return Spawner.spawn(spec);
  }

  @Override
  public synchronized void started(int pid) {
    handle =
        ProcCapsWatcher.watch(
            pid,
            memoryCapBytes,
            cpuBudgetNanos,
            new ProcCapsWatcher.Listener() {
              @Override
              public void exceeded(String resource) {
                // read from the handle when the exec completes
              }

              @Override
              public void unenforceable(Throwable cause) {
                // read from the handle when the exec completes
              }
            });
  }

  @Override
  public synchronized String exceeded() {
    return handle == null ? null : handle.exceeded();
  }

  @Override
  public synchronized Throwable unenforceable() {
    return handle == null ? null : handle.unenforceable();
  }

  @Override
  public synchronized TreeUsage usage() {
    if (handle == null) {
      return TreeUsage.NOT_MEASURED;
    }
    return new TreeUsage(
        handle.peakRssBytes(), handle.cpuUserNanos(), handle.cpuSystemNanos(), false);
  }

  @Override
  public synchronized void close() {
    if (handle != null) {
      handle.stop();
    }
  }
}
