package dev.confine.linux.spawn;

import dev.confine.linux.sys.EngineException;
import dev.confine.linux.sys.Syscalls;
import java.io.IOException;

/**
 * How a child gets into the cgroup that holds its tree, split by thread: what the spawning thread
 * does around the spawn (it may be a confinement thread, which cannot open cgroup files, so these
 * steps only write to descriptors opened beforehand), and what the caller does once the child
 * exists. One placement per spawn; {@link #release} ends it.
 */
public interface SpawnPlacement {
  /** On the spawning thread, right before the spawn: enter the tree's cgroups. */
  default void enter(int tid) throws IOException {}

  /** On the spawning thread, right after the spawn (also when it failed): leave them. */
  default void leave(int tid) throws IOException {}

  /** Whether {@link #enter} moves the spawning thread (a virtual thread must not do that). */
  default boolean movesThread() {
    return false;
  }

  /** The cgroup v2 directory fd the spawn clones into (CLONE_INTO_CGROUP), or -1. */
  default int cloneIntoCgroup() {
    return -1;
  }

  /**
   * On the caller, once the spawn is over: releases what the placement held for it (descriptors).
   * Idempotent.
   */
  default void release() {}

  /**
   * On the caller, after {@link #release}: moves the child where the spawn could not put it (a v1
   * memory cgroup, which no JVM thread may enter; a v2 cgroup without CLONE_INTO_CGROUP).
   *
   * @throws EngineException when it could not: the child and what it started are then killed and
   *     reaped and its descriptors closed
   */
  default void adopt(Spawner.Spawned child) {}

  /**
   * Whether {@link #adopt} must follow the spawn at once (it moves the child under a cap), so that
   * a spawn handed to another thread cannot be picked up later.
   */
  default boolean adoptsAtOnce() {
    return false;
  }

  /** Nothing to do: the process group, or the sampler, holds the tree. */
  SpawnPlacement NONE = new SpawnPlacement() {};

  /**
   * Spawns {@code spec} on the calling thread, placed by {@code placement}: enter, spawn (with
   * {@code pipes} as its stdio unless null), leave. Release and adopt are the caller's.
   *
   * @throws EngineException when the thread could not enter the cgroups (nothing was spawned)
   * @throws IllegalStateException when it could not leave them again: the thread must not spawn
   *     again (a child spawned in between is killed and reaped)
   */
  static Spawner.Spawned spawnHere(SpawnPlacement placement, SpawnSpec spec, Spawner.Pipes pipes) {
    int tid = Syscalls.gettid();
    try {
      placement.enter(tid);
    } catch (IOException e) {
      try {
        placement.leave(tid);
      } catch (IOException stuck) {
        e.addSuppressed(stuck);
        if (pipes != null) {
          pipes.closeChildEnds();
        }
        throw new IllegalStateException("the spawning thread could not leave a child's cgroup", e);
      }
      if (pipes != null) {
        pipes.closeChildEnds();
      }
      throw new EngineException("cannot place the child in its cgroup", e);
    }
    Spawner.Spawned s;
    try {
      int fd = placement.cloneIntoCgroup();
      s = pipes == null ? Spawner.spawn(spec, fd) : Spawner.spawn(spec, pipes, fd);
    } catch (RuntimeException e) {
      try {
        placement.leave(tid);
      } catch (IOException stuck) {
        // Being stuck in a cgroup outranks the failed spawn: the thread must not spawn again.
        IllegalStateException ise =
            new IllegalStateException(
                "the spawning thread could not leave a child's cgroup", stuck);
        ise.addSuppressed(e);
        throw ise;
      }
      throw e;
    }
    try {
      placement.leave(tid);
    } catch (IOException e) {
      Spawner.abandon(s, pipes == null);
      throw new IllegalStateException("the spawning thread could not leave a child's cgroup", e);
    }
    return s;
  }
}
