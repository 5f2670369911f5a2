package dev.confine.linux.spawn;

/**
 * A spawn handed to another thread, whose outcome its caller picks up when it next wakes for its
 * own reasons, so that finishing the spawn need not wake it.
 */
public interface PendingSpawn {
  /**
   * The outcome if the spawn is over: the child, or the spawn's failure thrown; null while it runs.
   */
  Spawner.Spawned poll();

  /** Waits for the outcome, not giving up on interrupt (a spawn is short); as {@link #poll}. */
  Spawner.Spawned await();
}
