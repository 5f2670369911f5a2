package dev.confine.linux;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Removes tree cgroups off the exec's path: the rmdir of each hierarchy's directory (about 0.3 ms
 * on v1 here) runs on one daemon thread while the caller already has its result. The guard has
 * emptied the cgroup before it hands it over; the janitor kills and waits again only if something
 * is still there. A shutdown hook finishes what is queued when the JVM exits normally; whatever a
 * killed JVM leaves is removed at the next start ({@link Cgroups#probe}).
 */
public final class CgroupJanitor {
  private static final BlockingQueue<TreeCgroup> QUEUE = new LinkedBlockingQueue<>();
  private static final AtomicInteger PENDING = new AtomicInteger();
  private static final Object IDLE = new Object();
  private static Thread thread; // under CgroupJanitor.class

  private CgroupJanitor() {}

  /** Queues {@code cg} for removal; its tree was killed, or ended, already. */
  static void remove(TreeCgroup cg) {
    PENDING.incrementAndGet();
    QUEUE.add(cg);
    ensureStarted();
  }

  private static synchronized void ensureStarted() {
    if (thread == null) {
      // Started by the closing exec's caller or the event loop, never by a confined thread: no
      // cgroup guard is used under confinement.
      thread =
          Thread.ofPlatform().name("confine-cgroup-janitor").daemon().start(CgroupJanitor::run);
      Runtime.getRuntime()
          .addShutdownHook(
              Thread.ofPlatform()
                  .name("confine-cgroup-janitor-exit")
                  .unstarted(CgroupJanitor::removeQueued));
    }
  }

  private static void run() {
    while (true) {
      try {
        removeOne(QUEUE.take());
      } catch (InterruptedException e) {
        // a daemon that lives as long as the JVM: keep going
      }
    }
  }

  private static void removeQueued() {
    TreeCgroup cg;
    while ((cg = QUEUE.poll()) != null) {
      removeOne(cg);
    }
  }

  private static void removeOne(TreeCgroup cg) {
    try {
      cg.remove();
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
