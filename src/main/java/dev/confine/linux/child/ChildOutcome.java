package dev.confine.linux.child;

import dev.confine.linux.spawn.ExitStatus;
import dev.confine.linux.tree.Cap;
import dev.confine.linux.tree.TreeUsage;

/**
 * How a child ended, an exec's ({@link Execution#runToCompletion}) and a session's ({@link
 * SessionProcess}) alike: the one shape the backends classify.
 *
 * @param ending why the wait ended
 * @param exit how the child ended, or null when it could not be reaped ({@code reapFailure})
 * @param reapFailure why the child could not be reaped, or null
 * @param leftoversKilled whether processes of the child's tree outlived it and were killed
 * @param exceeded the cap the guard found exceeded, or null
 * @param unenforceable why the guard could no longer enforce the caps, or null
 * @param usage what the tree consumed, as far as the guard measured
 */
public record ChildOutcome(
    Ending ending,
    ExitStatus exit,
    String reapFailure,
    boolean leftoversKilled,
    Cap exceeded,
    Throwable unenforceable,
    TreeUsage usage) {
  /** Why the wait for the child ended. */
  public enum Ending {
    /** The child exited by itself before the deadline. */
    EXITED,
    /** The deadline (an exec's or a session's timeout) passed first; the tree was killed. */
    TIMED_OUT,
    /** The waiting thread was interrupted (an exec only); the tree was killed. */
    INTERRUPTED
  }
}
