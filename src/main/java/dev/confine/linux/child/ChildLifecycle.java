package dev.confine.linux.child;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Syscalls;
import dev.confine.linux.tree.TreeGuard;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * How a child's tree is ended, the same for an exec ({@link Execution}, which waits on its caller's
 * thread) and a session ({@link SessionProcess}, whose steps run on the loop): the guard kills what
 * it holds before the process group is killed, what outlived a reaped leader is killed and
 * reported, and output still held after a kill gets {@link #SETTLE_AFTER_KILL_NANOS} more.
 */
final class ChildLifecycle {
  /** The most reads of one output per wake-up before the other fds get their turn. */
  static final int READS_PER_EVENT = 16;

  /** SIGKILL cannot be caught; only a task stuck in the kernel (D state) takes longer than this. */
  static final long REAP_AFTER_KILL_NANOS = TimeUnit.SECONDS.toNanos(10);

  /**
   * Killed holders close their outputs within milliseconds; after the drain this is all we wait.
   */
  static final long SETTLE_AFTER_KILL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  private ChildLifecycle() {}

  /**
   * Kills the whole tree: what {@code guard} holds first (a member killed before the guard looked
   * would orphan its children), then the process group ({@code killGroup}).
   */
  static void killTree(TreeGuard guard, BooleanSupplier killGroup) {
    guard.killTree();
    killGroup.getAsBoolean();
  }

  /**
   * Once the leader is reaped: kills whatever of its tree is left. The group's id stays reserved
   * only while members remain, so a group kill that reaches a process means something the leader
   * started was still running; the guard, first as in {@link #killTree}, may hold more.
   *
   * @return whether anything was left
   */
  static boolean killLeftovers(TreeGuard guard, BooleanSupplier killGroup) {
    boolean held = guard.hasProcesses();
    if (held) {
      guard.killTree();
    }
    return killGroup.getAsBoolean() | held;
  }

  /**
   * Sends SIGKILL to the process group {@code pid}.
   *
   * @return whether any process received it (false: the group was already gone)
   */
  static boolean killGroup(int pid) {
    return Syscalls.kill(-pid, LibC.SIGKILL()) == 0;
  }

  /**
   * Waits for {@code execution}'s child the way an exec does (see {@link
   * Execution#runToCompletion}), then closes its streams and {@code guard}.
   */
  static ChildOutcome complete(
      Execution execution, TreeGuard guard, long deadlineNanos, long drainNanos) {
    ChildOutcome.Ending ending = ChildOutcome.Ending.EXITED;
    boolean exited;
    try {
      exited = execution.awaitExit(deadlineNanos);
      if (!exited) {
        ending = ChildOutcome.Ending.TIMED_OUT;
      }
    } catch (InterruptedException e) {
      ending = ChildOutcome.Ending.INTERRUPTED;
      exited = false;
    }
    boolean leftovers = false;
    if (ending != ChildOutcome.Ending.EXITED) {
      killTree(guard, execution::killGroup);
      execution.awaitExitUninterruptibly(System.nanoTime() + REAP_AFTER_KILL_NANOS);
      execution.awaitOutputClosedUninterruptibly(System.nanoTime() + drainNanos);
    } else {
      long drainDeadline = System.nanoTime() + drainNanos;
      boolean drained;
      try {
        drained = execution.awaitOutputClosed(drainDeadline);
      } catch (InterruptedException e) {
        ending = ChildOutcome.Ending.INTERRUPTED;
        drained = false;
      }
      leftovers = killLeftovers(guard, execution::killGroup);
      if (!drained) {
        execution.awaitOutputClosedUninterruptibly(System.nanoTime() + SETTLE_AFTER_KILL_NANOS);
      }
    }
    execution.closeStreams();
    guard.close();
    if (ending == ChildOutcome.Ending.INTERRUPTED) {
      Thread.currentThread().interrupt();
    }
    return new ChildOutcome(
        ending,
        execution.exitStatus(),
        execution.reapFailure(),
        leftovers,
        guard.exceeded(),
        guard.unenforceable(),
        guard.usage());
  }
}
