package dev.confine.linux.child;

import dev.confine.linux.spawn.PendingSpawn;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.tree.TreeGuard;
import java.util.concurrent.TimeUnit;

/**
 * The spawn of an {@link Execution} handed to its guard's thread ({@link TreeGuard.HandedOff}, a
 * confinement thread) without waiting for it: the pipes are made on the caller's thread, which
 * watches their parent ends at once and sleeps until the child writes or closes its outputs (a
 * failed spawn closes the child's ends too); the pid and pidfd are taken up then, or {@link
 * #ADOPT_WITHIN_NANOS} after the hand-off at the latest. Used by the caller's thread only.
 */
final class HandOff {
  // A handed-off spawn's outcome is picked up at the latest this long after the hand-off, so that
  // an exit is seen on the pidfd while a background process still holds the pipes.
  private static final long ADOPT_WITHIN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private final Spawner.Pipes pipes;
  private final long adoptBy;
  private PendingSpawn pending; // null once the outcome was taken
  private RuntimeException failure; // the failed spawn's, once taken

  private HandOff(Spawner.Pipes pipes, PendingSpawn pending) {
    this.pipes = pipes;
    this.pending = pending;
    this.adoptBy = System.nanoTime() + ADOPT_WITHIN_NANOS;
  }

  /**
   * Opens the pipes and queues the spawn of {@code spec} with them on {@code guard}'s thread. When
   * either fails, what was opened and the guard are closed before the failure is thrown.
   */
  static HandOff submit(SpawnSpec spec, TreeGuard.HandedOff guard) {
    Spawner.Pipes pipes;
    PendingSpawn pending;
    try {
      pipes = Spawner.Pipes.open(spec.pipeStdin());
    } catch (RuntimeException e) {
      guard.close();
      throw e;
    }
    try {
      pending = guard.submit(spec, pipes);
    } catch (RuntimeException e) {
      pipes.closeChildEnds();
      pipes.closeParentEnds();
      guard.close();
      throw e;
    }
    return new HandOff(pipes, pending);
  }

  /** The pipes; their parent ends are the caller's to watch. */
  Spawner.Pipes pipes() {
    return pipes;
  }

  /** Whether the outcome is still to be taken. */
  boolean pending() {
    return pending != null;
  }

  /** When the outcome is due at the latest ({@link System#nanoTime()}). */
  long adoptBy() {
    return adoptBy;
  }

  /**
   * The outcome if it is there, or waited for with {@code block}: the child, or null while the
   * spawn runs. A failed spawn's exception is thrown, and again by every later call.
   */
  Spawner.Spawned take(boolean block) {
    if (failure != null) {
      throw failure;
    }
    Spawner.Spawned s;
    try {
      s = block ? pending.await() : pending.poll();
    } catch (RuntimeException e) {
      pending = null;
      failure = e;
      throw e;
    }
    if (s != null) {
      pending = null;
    }
    return s;
  }

  /** Whether {@code e} is the failed spawn's exception. */
  boolean threw(RuntimeException e) {
    return failure != null && failure == e;
  }
}
