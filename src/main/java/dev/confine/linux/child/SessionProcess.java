package dev.confine.linux.child;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.loop.EventLoop;
import dev.confine.linux.spawn.ExitStatus;
import dev.confine.linux.spawn.Pty;
import dev.confine.linux.spawn.Reaping;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import dev.confine.linux.tree.TreeGuard;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A child started as a long-lived session on the {@link EventLoop}, on a pty or on pipes: its
 * output goes to a {@link Listener} as it arrives, callers write its input, and its end is reported
 * once, after the output was drained and nothing of its tree is left. No thread per session:
 * reading, reaping, the timeout and the drain deadline all run on the loop.
 *
 * <p>The loop owns the pidfd and the timers; who reads the output fds, the loop or a client waiting
 * in a read, is the {@link OutputClaim}'s to say; the input fd is the {@link SessionInput}'s.
 */
public final class SessionProcess {
  /** Output stream ids passed to {@link Listener#output}. */
  public static final int STDOUT = 0;

  /** Standard error of a pipe session. */
  public static final int STDERR = 1;

  /** The terminal of a pty session. */
  public static final int TTY = 2;

  /** A non-blocking read of an output. */
  @FunctionalInterface
  public interface Source {
    /**
     * Reads what is waiting into {@code into}, from index 0 and at most its capacity (its position
     * and limit are left alone), without waiting.
     *
     * @return the number of bytes read, 0 at end of file, or -errno
     */
    long read(ByteBuffer into);
  }

  /**
   * What a session reports; called on the loop thread or a reading client, so it must not block.
   */
  public interface Listener {
    /**
     * The child may have written on {@code stream}: read {@code source} into {@code buffer} (the
     * reading thread's, reused) up to {@code maxReads} times, stopping at the first read that fills
     * less than the buffer, and keep what each read gave as one chunk, in order.
     *
     * @return the number of bytes read
     */
    long output(int stream, Source source, ByteBuffer buffer, int maxReads);

    /** The session ended; called once, after the last {@link #output}. */
    void ended(ChildOutcome end);
  }

  private final EventLoop loop;
  private final int pid;
  private final boolean tty;
  private final TreeGuard guard;
  private final Listener listener;
  private final long drainNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition endedCondition = lock.newCondition();
  private ChildOutcome end; // under lock

  // Loop thread only.
  private ExitStatus exit;
  private String reapFailure;
  private boolean reaped;
  private boolean timedOut;
  private boolean finished;
  private EventLoop.Timer timeoutTimer;
  private EventLoop.Timer drainTimer;

  private final OutputClaim outputs;
  private final SessionInput input;

  private SessionProcess(
      EventLoop loop,
      int pid,
      boolean tty,
      int inputFd,
      TreeGuard guard,
      Listener listener,
      long drainNanos) {
    this.loop = loop;
    this.pid = pid;
    this.tty = tty;
    this.guard = guard;
    this.listener = listener;
    this.drainNanos = drainNanos;
    this.outputs = new OutputClaim(loop, listener, this::outputsEnded);
    this.input = new SessionInput(inputFd);
  }

  /**
   * Spawns {@code spec} under {@code guard} on a new pty of {@code rows} x {@code cols} (when
   * {@code tty}) or on pipes, and starts watching it. The session owns the guard from now on; when
   * the spawn fails the guard is closed before the failure is thrown.
   *
   * @param timeoutNanos how long the child may run before its tree is killed; 0 = no limit
   * @param drainNanos how long output may keep flowing after the child exits
   * @throws ErrnoException when the pty or the spawn fails
   */
  public static SessionProcess start(
      SpawnSpec spec,
      boolean tty,
      int rows,
      int cols,
      TreeGuard guard,
      long timeoutNanos,
      long drainNanos,
      Listener listener) {
    EventLoop loop = EventLoop.shared();
    Pty.Opened pty = null;
    Spawner.Spawned s;
    int input;
    try {
      if (tty) {
        pty = Pty.open(rows, cols);
        spec = spec.withStdio(false, pty.slavePath());
      } else {
        spec = spec.withStdio(true, null);
      }
      s = guard.spawn(spec);
      if (tty) {
        input = Syscalls.fcntl(pty.master(), LibC.F_DUPFD_CLOEXEC(), 0);
        if (input < 0) {
          Syscalls.kill(-s.pid(), LibC.SIGKILL());
          try (Arena arena = Arena.ofConfined()) {
            // Reaped here, not left a zombie: nothing else knows this child.
            Syscalls.waitid(
                LibC.P_PIDFD(),
                s.pidfd(),
                arena.allocate(Reaping.SIGINFO.byteSize()),
                LibC.WEXITED());
          }
          Syscalls.close(s.pidfd());
          throw new ErrnoException("fcntl(F_DUPFD_CLOEXEC)", -input);
        }
      } else {
        input = s.stdinFd();
      }
    } catch (RuntimeException e) {
      if (pty != null) {
        Syscalls.close(pty.master());
      }
      guard.close();
      throw e;
    }
    guard.started(s.pid());
    SessionProcess p = new SessionProcess(loop, s.pid(), tty, input, guard, listener, drainNanos);
    Syscalls.setNonBlocking(input); // the pty duplicate shares the master's flags anyway
    if (tty) {
      p.outputs.watch(new int[] {TTY}, new int[] {pty.master()});
    } else {
      p.outputs.watch(new int[] {STDOUT, STDERR}, new int[] {s.stdoutFd(), s.stderrFd()});
    }
    long deadline = timeoutNanos > 0 ? System.nanoTime() + timeoutNanos : 0;
    int pidfd = s.pidfd();
    loop.execute(
        () -> {
          if (timeoutNanos > 0 && !p.finished) {
            p.timeoutTimer = loop.schedule(deadline, p::onTimeout);
          }
          loop.register(pidfd, LibC.EPOLLIN(), p::onExit, true);
        });
    return p;
  }

  /** The child's pid, which is also its process group and session id. */
  public int pid() {
    return pid;
  }

  /** Whether the child runs on a pty. */
  public boolean tty() {
    return tty;
  }

  /** The child's input: writes, close, and on a pty the window size and control characters. */
  public SessionInput input() {
    return input;
  }

  /**
   * Reads the child's output on the calling platform thread while it waits in a read of the
   * session, instead of waiting for the loop thread to read it and hand it over (see {@link
   * OutputClaim#readOnCaller}).
   *
   * @return {@link CallerRead#SOME} when output (or an output's end) was taken in, or the thread is
   *     interrupted: the caller re-checks; {@link CallerRead#BUSY} when the loop or another client
   *     holds the outputs; {@link CallerRead#NONE} when a virtual thread calls, none is left for a
   *     client, or nothing came within the slice: the caller waits for the loop as before
   */
  public CallerRead readOnCaller(long deadlineNanos) {
    return outputs.readOnCaller(deadlineNanos);
  }

  /** What {@link #readOnCaller(long)} found. */
  public enum CallerRead {
    /** Output, or an output's end, was taken in, or the thread is interrupted: look again. */
    SOME,
    /** The loop or another client holds the outputs, perhaps only for a moment: try again soon. */
    BUSY,
    /**
     * Nothing came within the slice, or the outputs are not a client's to read: wait for the loop.
     */
    NONE
  }

  private void onExit(long token, int events) {
    int r = Syscalls.waitid(LibC.P_PIDFD(), loop.fdOf(token), Reaping.SIGINFO, LibC.WEXITED());
    if (r == 0) {
      exit = Reaping.status();
    } else if (-r == LibC.EINTR() || -r == LibC.EAGAIN()) {
      return; // level-triggered: the loop calls again
    } else {
      reapFailure = "waitid(P_PIDFD) for pid " + pid + ": " + Syscalls.strerror(-r);
    }
    loop.close(token);
    reaped = true;
    // The timeout bounds the child, as an exec's deadline does; what it left holding the output is
    // the drain's to end.
    if (timeoutTimer != null) {
      timeoutTimer.cancel();
    }
    if (outputs.allEnded()) {
      finish();
    } else {
      drainTimer = loop.schedule(System.nanoTime() + drainNanos, this::onDrainExpired);
    }
  }

  private void onTimeout() {
    if (!finished && !reaped) {
      timedOut = true;
      killTree();
    }
  }

  private void onDrainExpired() {
    if (finished) {
      return;
    }
    // A background process still holds the output: kill what can be killed, then stop reading.
    killTree();
    drainTimer =
        loop.schedule(System.nanoTime() + ChildLifecycle.SETTLE_AFTER_KILL_NANOS, this::cutOutputs);
  }

  /** Stops reading the outputs still open; after a client's slice when one is reading them. */
  private void cutOutputs() {
    if (finished) {
      return;
    }
    if (!outputs.cut()) {
      drainTimer =
          loop.schedule(System.nanoTime() + OutputClaim.CALLER_SLICE_NANOS, this::cutOutputs);
    }
  }

  /** On the loop thread, once every output has ended. */
  private void outputsEnded() {
    if (reaped) {
      finish();
    }
  }

  private void finish() {
    if (finished) {
      return;
    }
    finished = true;
    if (timeoutTimer != null) {
      timeoutTimer.cancel();
    }
    if (drainTimer != null) {
      drainTimer.cancel();
    }
    boolean leftovers = ChildLifecycle.killLeftovers(guard, this::killGroup);
    guard.close();
    ChildOutcome e =
        new ChildOutcome(
            timedOut ? ChildOutcome.Ending.TIMED_OUT : ChildOutcome.Ending.EXITED,
            exit,
            reapFailure,
            leftovers,
            guard.exceeded(),
            guard.unenforceable(),
            guard.usage());
    try {
      listener.ended(e);
    } finally {
      lock.lock();
      try {
        end = e;
        endedCondition.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  /** Sends SIGTERM to the child's process group; false when the group is gone. */
  public boolean terminateGroup() {
    return Syscalls.kill(-pid, LibC.SIGTERM()) == 0;
  }

  /** Sends SIGINT to the child's process group; false when the group is gone. */
  public boolean interruptGroup() {
    return Syscalls.kill(-pid, LibC.SIGINT()) == 0;
  }

  /** Kills the child's process group and whatever else the guard holds. */
  public void killTree() {
    ChildLifecycle.killTree(guard, this::killGroup);
  }

  private boolean killGroup() {
    return ChildLifecycle.killGroup(pid);
  }

  /**
   * Waits until the session has ended, or until {@code deadlineNanos} ({@code Long.MAX_VALUE} = no
   * deadline).
   *
   * @return how it ended, or null when it is still running at the deadline
   */
  public ChildOutcome awaitEnd(long deadlineNanos) throws InterruptedException {
    lock.lock();
    try {
      while (end == null) {
        if (deadlineNanos == Long.MAX_VALUE) {
          endedCondition.await();
        } else {
          long left = deadlineNanos - System.nanoTime();
          if (left <= 0) {
            return null;
          }
          endedCondition.await(left, TimeUnit.NANOSECONDS);
        }
      }
      return end;
    } finally {
      lock.unlock();
    }
  }

  /** How the session ended, or null while it runs. */
  public ChildOutcome end() {
    lock.lock();
    try {
      return end;
    } finally {
      lock.unlock();
    }
  }
}
