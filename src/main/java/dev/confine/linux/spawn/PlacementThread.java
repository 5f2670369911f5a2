package dev.confine.linux.spawn;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Supplier;

/**
 * The platform threads that spawn into v1 cgroups for virtual threads: one moves itself into the
 * child's cgroups, spawns, and moves back, so the child is inside from its first instruction. A
 * virtual thread cannot do that itself, since it could change carriers between the moves; a
 * platform caller does it on its own thread (see {@code Cgroups.spawn}). Every exec is tracked by a
 * cgroup, so concurrent virtual threads' spawns share a few such threads (as many as there are
 * CPUs, 2 to 4), not one: a spawn waits for its child's exec, during which another can start.
 */
public final class PlacementThread {
  private static final BlockingQueue<Runnable> QUEUE = new LinkedBlockingQueue<>();
  static final int THREADS = Math.max(2, Math.min(4, Runtime.getRuntime().availableProcessors()));

  static {
    for (int i = 0; i < THREADS; i++) {
      Thread.ofPlatform()
          .name("confine-cgroup-placement-" + i)
          .daemon()
          .start(
              () -> {
                while (true) {
                  try {
                    QUEUE.take().run();
                  } catch (InterruptedException e) {
                    // nobody interrupts this thread on purpose; keep serving
                  }
                }
              });
    }
  }

  private PlacementThread() {}

  /** Starts the placement threads now (they start with this class). */
  public static void start() {
    // class initialisation started them
  }

  /** Runs {@code task} on the placement thread and returns its result (or rethrows its failure). */
  public static <T> T call(Supplier<T> task) {
    CompletableFuture<T> result = new CompletableFuture<>();
    QUEUE.add(
        () -> {
          try {
            result.complete(task.get());
          } catch (Throwable t) {
            result.completeExceptionally(t);
          }
        });
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return result.get();
        } catch (InterruptedException e) {
          interrupted = true; // the spawn is short and must not be abandoned half done
        } catch (ExecutionException e) {
          if (e.getCause() instanceof RuntimeException re) {
            throw re;
          }
          if (e.getCause() instanceof Error err) {
            throw err;
          }
          throw new IllegalStateException(e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
