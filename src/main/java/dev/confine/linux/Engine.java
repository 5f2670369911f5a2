package dev.confine.linux;

import dev.confine.linux.child.Captured;
import dev.confine.linux.child.ChildOutcome;
import dev.confine.linux.child.ChildSpec;
import dev.confine.linux.child.Execution;
import dev.confine.linux.child.SessionProcess;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.sys.Availability;
import dev.confine.linux.sys.EngineException;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.tree.TreeGuard;
import java.time.Duration;
import java.util.function.BiFunction;

/**
 * The engine's front door: what a backend asks of the OS. A backend describes one child ({@link
 * ChildSpec}, with the guard its {@link Caps} made and, for a confined backend, wrapped in a
 * confinement), runs it here and gets one {@link ChildOutcome}: the same shape for an exec and a
 * session. The spawn strategy is chosen inside, once per child.
 */
public final class Engine {
  /**
   * How long output may keep flowing after a child exits (or is killed) before what is left of its
   * tree is killed and its pipes are cut.
   */
  public static final Duration DRAIN = Duration.ofSeconds(2);

  private Engine() {}

  /** Whether the engine can run on this host (the FFM API, native access, a supported libc). */
  public static Availability availability() {
    return NativeAccess.availability();
  }

  /**
   * Runs the exec {@code spec} describes to its end, as {@link Execution#runToCompletion} does (the
   * deadline, the drain, every process of the tree killed), and maps how it ended and what it left
   * behind with {@code result}. Large outputs are handed to {@code result} by one exec of the JVM
   * at a time ({@link Execution#handOver}), so the heap holds the copies of one at once.
   *
   * @throws ErrnoException when the spawn fails
   * @throws EngineException when the engine fails around the spawn
   * @throws RuntimeException a failure of the guard's own spawn (a confinement that could not be
   *     applied), as it threw it
   */
  public static <T> T run(ChildSpec spec, BiFunction<ChildOutcome, Captured, T> result) {
    Execution execution = Execution.start(spec);
    ChildOutcome outcome = execution.runToCompletion(spec.deadlineNanos(), DRAIN.toNanos());
    return execution.handOver(() -> result.apply(outcome, execution));
  }

  /**
   * Starts a session: {@code spawn} under {@code guard} on a new pty of {@code rows} x {@code cols}
   * (when {@code tty}) or on pipes, watched by the event loop, its output and end reported to
   * {@code listener}. The session owns the guard from now on; when the spawn fails the guard is
   * closed before the failure is thrown.
   *
   * @param timeoutNanos how long the child may run before its tree is killed; 0 = no limit
   * @throws ErrnoException when the pty or the spawn fails
   */
  public static SessionProcess startSession(
      SpawnSpec spawn,
      boolean tty,
      int rows,
      int cols,
      TreeGuard guard,
      long timeoutNanos,
      SessionProcess.Listener listener) {
    return SessionProcess.start(
        spawn, tty, rows, cols, guard, timeoutNanos, DRAIN.toNanos(), listener);
  }

  /**
   * The most bytes per output stream this JVM lets an exec keep: see {@link
   * Execution#maxOutputCap()}.
   */
  public static long maxOutputCap() {
    return Execution.maxOutputCap();
  }
}
