package dev.confine.linux.tree;

import dev.confine.linux.spawn.PendingSpawn;
import dev.confine.linux.spawn.SpawnPlacement;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.EngineException;

/**
 * What holds a process tree beyond its process group, and enforces its caps: a cgroup, the /proc
 * sampler, or nothing. One guard per exec or session; {@code Execution} drives it.
 */
public interface TreeGuard extends AutoCloseable {
  /** Spawns {@code spec} so that the guard holds the child from its first instruction on. */
  Spawner.Spawned spawn(SpawnSpec spec);

  /**
   * How a child spawned on another thread (a confinement thread) gets into what this guard holds it
   * with; {@link #spawn} uses the same on the calling thread. Called once, before the spawn.
   *
   * @throws EngineException when the placement cannot be prepared
   */
  default SpawnPlacement placement() {
    return SpawnPlacement.NONE;
  }

  /** The child has started; begin watching. */
  default void started(int pid) {}

  /** Kills every process the guard holds (beyond the process group, where it can). */
  default void killTree() {}

  /** Whether processes the guard holds are still running (false when it cannot tell). */
  default boolean hasProcesses() {
    return false;
  }

  /** The cap that was exceeded, or null. */
  default Cap exceeded() {
    return null;
  }

  /** Why the caps stopped being enforceable while the tree ran, or null. */
  default Throwable unenforceable() {
    return null;
  }

  /**
   * Whether, once {@link #close()} has returned, nothing the tree started can be alive: the guard
   * holds every process of the tree from its first instruction (a cgroup the child started in) and
   * close empties it. False where a process can slip by (the process group alone, the sampler, a
   * cgroup joined after the spawn): a resource the tree had (a directory it wrote to) must then not
   * be handed to the next tree.
   */
  default boolean holdsEveryProcess() {
    return false;
  }

  /** What the tree consumed, as far as the guard measured. */
  default TreeUsage usage() {
    return TreeUsage.NOT_MEASURED;
  }

  /** Stops watching and releases what the guard holds (a cgroup is queued for removal). */
  @Override
  default void close() {}

  /** No guard: the process group is all there is. */
  TreeGuard NONE = Spawner::spawn;

  /**
   * A guard whose spawns run on another thread (a confinement thread). An {@code Execution} whose
   * caller waits on its own thread submits the spawn with pipes it made and sleeps on their parent
   * ends: the child's output or exit wakes it, not the end of the spawn, which would make a third
   * runnable thread while the child starts.
   */
  interface HandedOff extends TreeGuard {
    /**
     * Queues the spawn of {@code spec} with {@code pipes} as its stdio (their child ends are closed
     * once it is over, whatever the outcome; the parent ends stay the caller's) and returns at
     * once.
     */
    PendingSpawn submit(SpawnSpec spec, Spawner.Pipes pipes);
  }
}
