package dev.confine.linux.child;

import dev.confine.linux.spawn.ExitStatus;
import dev.confine.linux.tree.Cap;
import dev.confine.linux.tree.TreeUsage;

/**
 * How {@link Execution#runToCompletion} ended.
 *
 * @param ending why the wait ended
 * @param exit how the child ended, or null when it could not be reaped
 * @param leftoversKilled whether processes of the child's group outlived it and were killed
 * @param exceeded the cap the guard found exceeded, or null
 * @param unenforceable why the guard could no longer enforce the caps, or null
 * @param usage what the tree consumed, as far as the guard measured
 */
public record Completion(
    Ending ending,
    ExitStatus exit,
    boolean leftoversKilled,
    Cap exceeded,
    Throwable unenforceable,
    TreeUsage usage) {
  /** Why the wait ended. */
  public enum Ending {
    /** The child exited by itself before the deadline. */
    EXITED,
    /** The deadline passed first; the group was killed. */
    TIMED_OUT,
    /** The waiting thread was interrupted; the group was killed. */
    INTERRUPTED
  }
}
