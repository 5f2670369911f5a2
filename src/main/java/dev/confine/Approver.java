package dev.confine;

/**
 * Decides whether a request that a predicate flagged may run: a human in the loop, a policy
 * service, a rule.
 *
 * <p>Fail-closed: an approver that throws stops the call, which is then not run.
 */
@FunctionalInterface
public interface Approver {
  /**
   * Decides on {@code request}.
   *
   * @return {@link Decision#ALLOW} to run it; anything else (including null) denies
   * @throws RuntimeException any failure, which stops the call (fail-closed)
   */
  Decision decide(ApprovalRequest request);
}
