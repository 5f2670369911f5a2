package dev.confine.linux.cgroup;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * Recycles (v1) or removes tree cgroups off the exec's path, on one daemon thread, while the caller
 * already has its result: a v1 cgroup is readied for the next tree ({@link V1TreeCgroup#recycle})
 * and kept idle by its {@link CgroupPool}, or removed (rmdir of each hierarchy's directory). The
 * guard has emptied the cgroup before it hands it over; the janitor kills and waits again only if
 * something is still there. A shutdown hook removes the idle ones and what is queued when the JVM
 * exits normally; whatever a killed JVM leaves is removed at the next start ({@link
 * Cgroups#probe}).
 */
public final class CgroupJanitor {
  /**
   * A cgroup to remove ({@code keep} null), or a v1 one to recycle and offer to {@code keep}
   * (removed when that fails or it declines).
   */
  private record Job(TreeCgroup cg, boolean knownEmpty, Predicate<V1TreeCgroup> keep) {}

  private static final Queue<Job> QUEUE = new ConcurrentLinkedQueue<>();
  private static final List<Runnable> AT_EXIT = new CopyOnWriteArrayList<>();
  private static volatile boolean exiting;
  // While work keeps coming the thread looks for it every tick instead of being woken for each
  // item (an unpark costs the closing exec an inter-processor interrupt); idle this long, it parks.
  private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  private static final int LINGER_TICKS = 200;
  private static volatile boolean parked;
  private static final AtomicInteger PENDING = new AtomicInteger();
  private static final Object IDLE = new Object();
  private static Thread thread; // under CgroupJanitor.class

  private CgroupJanitor() {}

  /** Queues {@code cg} for removal; its tree was killed, or ended, already. */
  static void remove(TreeCgroup cg) {
    queue(new Job(cg, false, null));
  }

  /**
   * Queues {@code cg}, whose tree is over, to be emptied and reset ({@link V1TreeCgroup#recycle})
   * and offered to {@code keep}; it is removed when that fails or {@code keep} declines.
   */
  static void recycle(V1TreeCgroup cg, boolean knownEmpty, Predicate<V1TreeCgroup> keep) {
    queue(new Job(cg, knownEmpty, keep));
  }

  /** Runs {@code action} (which may queue removals) when the JVM exits, before the last ones. */
  static void atExit(Runnable action) {
    AT_EXIT.add(action);
    // Idle cgroups can be kept without the janitor ever running (trackers are kept idle by their
    // releaser): the hook that removes them must not wait for the thread.
    registerHook();
  }

  private static boolean hooked; // under CgroupJanitor.class

  private static synchronized void registerHook() {
    if (!hooked) {
      hooked = true;
      Runtime.getRuntime()
          .addShutdownHook(
              Thread.ofPlatform()
                  .name("confine-cgroup-janitor-exit")
                  .unstarted(CgroupJanitor::onExit));
    }
  }

  /** Whether the JVM is exiting: nothing is to be kept for reuse any more. */
  static boolean exiting() {
    return exiting;
  }

  private static void queue(Job job) {
    PENDING.incrementAndGet();
    QUEUE.add(job);
    ensureStarted();
    if (parked) {
      LockSupport.unpark(thread());
    }
  }

  /** Starts the janitor's thread now, if it is not running yet. */
  static void start() {
    ensureStarted();
  }

  private static synchronized Thread thread() {
    return thread;
  }

  private static synchronized void ensureStarted() {
    if (thread == null) {
      // Started by the closing exec's caller or the event loop, never by a confined thread: no
      // cgroup guard is used under confinement.
      thread =
          Thread.ofPlatform().name("confine-cgroup-janitor").daemon().start(CgroupJanitor::run);
      registerHook();
    }
  }

  private static void run() {
    int idleTicks = 0;
    while (true) {
      Job job = QUEUE.poll();
      if (job != null) {
        run(job);
        idleTicks = 0;
      } else if (idleTicks < LINGER_TICKS) {
        idleTicks++;
        LockSupport.parkNanos(TICK_NANOS);
      } else {
        parked = true;
        if (QUEUE.isEmpty()) { // an item queued before the flag was seen: no unpark came
          LockSupport.park();
        }
        parked = false;
        idleTicks = 0;
      }
    }
  }

  private static void onExit() {
    exiting = true;
    for (Runnable r : AT_EXIT) {
      r.run();
    }
    Job job;
    while ((job = QUEUE.poll()) != null) {
      run(new Job(job.cg(), false, null)); // nothing is recycled at exit
    }
  }

  private static void run(Job job) {
    try {
      if (job.keep() != null
          && job.cg() instanceof V1TreeCgroup v1
          && !exiting
          && v1.recycle(job.knownEmpty())
          && job.keep().test(v1)) {
        return;
      }
      job.cg().remove();
    } catch (IOException e) {
      // the directory stays; the next start of a JVM removes trees whose owner is gone
    } finally {
      if (PENDING.decrementAndGet() == 0) {
        synchronized (IDLE) {
          IDLE.notifyAll();
        }
      }
    }
  }

  /**
   * Waits until every queued cgroup has been removed (or could not be), at most {@code timeout}.
   *
   * @return whether none is pending
   */
  public static boolean awaitIdle(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (IDLE) {
      while (PENDING.get() > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(IDLE, left);
      }
    }
    return true;
  }
}
