package dev.confine.linux.proc;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Syscalls;
import dev.confine.linux.tree.Cap;
import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enforces memory and CPU caps on process trees by sampling them from /proc ({@link ProcSampler}),
 * where no cgroup can do it exactly. Every watch of the JVM runs on one shared daemon platform
 * thread, so a thousand watched trees cost no thread each. That thread is created by the first
 * caller of {@link #watch}, and a thread inherits seccomp, Landlock and namespaces from its
 * creator: never call it first from a confined spawner thread.
 *
 * <p>Per watch, a first sample right away, then one every {@value #FAST_INTERVAL_MILLIS} ms during
 * the first {@value #FAST_PERIOD_MILLIS} ms and every {@value #INTERVAL_MILLIS} ms after that: the
 * early samples see short commands at all and catch a runaway allocation soon after the start; the
 * later interval bounds a fast allocator's overshoot at a small share of one CPU
 * (docs/benchmarks.md).
 *
 * <p>At each sample, as the seed's GroupCapsWatcher: memory is checked before CPU, a cap is reached
 * when the sample is {@code >=} it, and then the whole tree is killed (stopped and SIGKILLed, the
 * members that left the group and the session included, see {@link ProcSampler#killTree()}), the
 * breach is reported and the watch ends. A failing sample is tolerated twice in a row; the third
 * consecutive failure kills the tree and reports the tree {@linkplain Listener#unenforceable
 * unenforceable}. A success resets the count.
 */
public final class ProcCapsWatcher {
  private static final Logger LOG = LoggerFactory.getLogger(ProcCapsWatcher.class);

  /** The sampling interval after the first {@value #FAST_PERIOD_MILLIS} ms. */
  public static final long INTERVAL_MILLIS = 50;

  /** The sampling interval during the first {@value #FAST_PERIOD_MILLIS} ms. */
  public static final long FAST_INTERVAL_MILLIS = 10;

  /** How long after the start the fast interval applies. */
  public static final long FAST_PERIOD_MILLIS = 100;

  /** Consecutive sampling failures that make a tree unenforceable. */
  public static final int MAX_FAILURES = 3;

  /** What a watch reports. Runs on the watcher's thread, so it must be quick and never block. */
  public interface Listener {
    /**
     * A cap was reached; the tree has been killed.
     *
     * @param cap the cap that was reached
     */
    void exceeded(Cap cap);

    /**
     * Sampling failed {@value ProcCapsWatcher#MAX_FAILURES} times in a row; the group has been
     * killed.
     *
     * @param cause says so, with the last failure as its cause
     */
    void unenforceable(Throwable cause);
  }

  private ProcCapsWatcher() {}

  /** Starts the shared sampler thread now, from the calling (unconfined) thread. */
  public static void startSharedThread() {
    SharedThread.EXECUTOR.prestartCoreThread();
  }

  private static final class SharedThread {
    static final ScheduledThreadPoolExecutor EXECUTOR = create();

    private static ScheduledThreadPoolExecutor create() {
      ScheduledThreadPoolExecutor e =
          new ScheduledThreadPoolExecutor(
              1,
              r ->
                  Thread.ofPlatform()
                      .name("confine-caps-sampler")
                      .daemon()
                      .inheritInheritableThreadLocals(false)
                      .unstarted(r));
      e.setRemoveOnCancelPolicy(true);
      e.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
      return e;
    }
  }

  /**
   * Starts watching the tree of {@code leaderPid} (a session leader, so its pid is also its process
   * group's id).
   *
   * @param memoryCapBytes the resident memory cap, or 0 for none
   * @param cpuCapNanos the CPU time (user + system) cap, or 0 for none; with neither cap the watch
   *     only measures
   * @param listener told when the watch kills the tree
   * @return the running watch; {@link Handle#stop() stop} it once the leader has been reaped
   */
  public static Handle watch(
      int leaderPid, long memoryCapBytes, long cpuCapNanos, Listener listener) {
    return watch(leaderPid, memoryCapBytes, cpuCapNanos, listener, new ProcSampler(leaderPid));
  }

  /** As {@link #watch(int, long, long, Listener)} with a given sampler (tests). */
  static Handle watch(
      int leaderPid,
      long memoryCapBytes,
      long cpuCapNanos,
      Listener listener,
      TreeSampler sampler) {
    if (leaderPid <= 0) {
      throw new IllegalArgumentException("leader pid must be positive: " + leaderPid);
    }
    if (memoryCapBytes < 0 || cpuCapNanos < 0) {
      throw new IllegalArgumentException(
          "caps must not be negative: memory " + memoryCapBytes + ", cpu " + cpuCapNanos);
    }
    Handle h =
        new Handle(
            leaderPid,
            memoryCapBytes,
            cpuCapNanos,
            Objects.requireNonNull(listener, "listener"),
            Objects.requireNonNull(sampler, "sampler"));
    h.schedule(0);
    return h;
  }

  /** One watched tree. Thread-safe. */
  public static final class Handle {
    private final int leader;
    private final long memoryCap;
    private final long cpuCap;
    private final Listener listener;
    private final TreeSampler sampler;
    private final long startNanos = System.nanoTime();
    // Held for a whole tick (sample, kill, callback), so stop() waits for a tick in progress.
    private final ReentrantLock lock = new ReentrantLock();

    private ScheduledFuture<?> next; // guarded by lock
    private boolean stopped; // guarded by lock
    private int failures; // only the watcher thread
    private volatile long peakRss;
    private volatile long cpuUser;
    private volatile long cpuSystem;
    private volatile Cap exceeded;
    private volatile Throwable unenforceable;

    private Handle(
        int leader, long memoryCap, long cpuCap, Listener listener, TreeSampler sampler) {
      this.leader = leader;
      this.memoryCap = memoryCap;
      this.cpuCap = cpuCap;
      this.listener = listener;
      this.sampler = sampler;
    }

    private void schedule(long delayMillis) {
      lock.lock();
      try {
        if (!stopped) {
          next = SharedThread.EXECUTOR.schedule(this::tick, delayMillis, TimeUnit.MILLISECONDS);
        }
      } finally {
        lock.unlock();
      }
    }

    private void tick() {
      lock.lock();
      try {
        if (stopped) {
          return;
        }
        ProcSampler.Sample s;
        try {
          s = sampler.sample();
        } catch (Throwable t) { // whatever breaks sampling leaves the caps unenforced
          if (++failures >= MAX_FAILURES) {
            Throwable cause =
                new IOException(
                    "process-tree sampling failed "
                        + failures
                        + " times in a row: "
                        + t.getMessage(),
                    t);
            unenforceable = cause;
            end("sample_failure");
            notify(() -> listener.unenforceable(cause));
            return;
          }
          scheduleNext();
          return;
        }
        failures = 0;
        peakRss = Math.max(peakRss, s.rssBytes());
        cpuUser = s.cpuUserNanos();
        cpuSystem = s.cpuSystemNanos();
        Cap breach = null;
        if (memoryCap > 0 && s.rssBytes() >= memoryCap) {
          breach = Cap.MEMORY;
        } else if (cpuCap > 0 && s.cpuNanos() >= cpuCap) {
          breach = Cap.CPU;
        }
        if (breach == null) {
          scheduleNext();
          return;
        }
        Cap cap = breach;
        exceeded = cap;
        end(cap.word() + "_cap");
        notify(() -> listener.exceeded(cap));
      } finally {
        lock.unlock();
      }
    }

    private void scheduleNext() {
      long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
      schedule(elapsedMillis < FAST_PERIOD_MILLIS ? FAST_INTERVAL_MILLIS : INTERVAL_MILLIS);
    }

    /** Kills the tree and ends the watch; called with the lock held. */
    private void end(String reason) {
      stopped = true;
      killTreeLocked(reason);
    }

    private void killTreeLocked(String reason) {
      try {
        sampler.killTree();
      } catch (IOException | RuntimeException e) {
        LOG.warn("confine: could not kill the whole tree of {} ({})", leader, reason, e);
      }
      // Whatever else happened, the group goes.
      int r = Syscalls.kill(-leader, LibC.SIGKILL());
      if (r < 0 && -r != LibC.ESRCH()) {
        LOG.warn(
            "confine: could not kill process group {} ({}): {}",
            leader,
            reason,
            Syscalls.strerror(-r));
      }
    }

    /**
     * The last look at the tree before its exec ends (the leader has exited): a sample that scans
     * the tree's sessions, waiting for a tick in progress. Works after the watch ended too.
     *
     * @return whether any process of the tree is alive; false when sampling fails (nothing to tell)
     */
    public boolean lastLook() {
      lock.lock();
      try {
        return sampler.lastLook();
      } catch (IOException | RuntimeException e) {
        return false;
      } finally {
        lock.unlock();
      }
    }

    /**
     * Kills the tree: every process it can find, stopped first so that none forks while it is
     * killed (see {@link ProcSampler#killTree()}), and the leader's process group.
     */
    public void killTree() {
      lock.lock();
      try {
        killTreeLocked("kill");
      } finally {
        lock.unlock();
      }
    }

    private void notify(Runnable callback) {
      try {
        callback.run();
      } catch (RuntimeException e) {
        LOG.warn("confine: caps listener for process group {} failed", leader, e);
      }
    }

    /**
     * Ends the watch: when this returns, no sample is taken and no listener called any more (a
     * sample in progress is waited for). Idempotent; safe from the listener itself.
     */
    public void stop() {
      lock.lock();
      try {
        stopped = true;
        if (next != null) {
          next.cancel(false);
          next = null;
        }
      } finally {
        lock.unlock();
      }
    }

    /** The largest resident memory of the tree seen in a sample, in bytes; 0 before any. */
    public long peakRssBytes() {
      return peakRss;
    }

    /** The tree's user CPU time at the last successful sample, in nanoseconds. */
    public long cpuUserNanos() {
      return cpuUser;
    }

    /** The tree's system CPU time at the last successful sample, in nanoseconds. */
    public long cpuSystemNanos() {
      return cpuSystem;
    }

    /** The cap that killed the tree, else null. */
    public Cap exceeded() {
      return exceeded;
    }

    /**
     * Why the caps could not be enforced (sampling failed {@value ProcCapsWatcher#MAX_FAILURES}
     * times in a row; the tree was killed), else null. Never set together with {@link #exceeded()};
     * check it first, as it is no evidence of overuse.
     */
    public Throwable unenforceable() {
      return unenforceable;
    }
  }
}
