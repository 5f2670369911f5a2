package dev.confine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/** The runner behind {@link Runners#withApproval}. */
final class ApprovalRunner implements PolicyRunner {
  private final Runner inner;
  private final Approver approver;
  private final List<ExecPredicate> predicates;

  ApprovalRunner(Runner inner, Approver approver, List<ExecPredicate> predicates) {
    this.inner = Runners.requireInner(inner);
    this.approver = approver;
    // Null entries are kept on purpose: reaching one fails closed (see authorize).
    this.predicates =
        predicates == null ? List.of() : Collections.unmodifiableList(new ArrayList<>(predicates));
  }

  @Override
  public Runner inner() {
    return inner;
  }

  @Override
  public ExecRequest admit(ExecRequest request) {
    authorize(request);
    return request;
  }

  /**
   * Evaluates the predicates in order; the first that matches decides through the approver. An
   * ALLOW ends the evaluation; no match runs the request without asking anyone.
   */
  void authorize(ExecRequest request) {
    for (ExecPredicate predicate : predicates) {
      if (predicate == null) {
        throw SandboxException.of(
            SandboxException.Kind.POLICY_DENIED,
            "null approval predicate configured (fail-closed)");
      }
      Optional<String> reason = predicate.match(request);
      if (reason == null || reason.isEmpty()) {
        continue;
      }
      String why = reason.get();
      if (approver == null) {
        throw SandboxException.of(
            SandboxException.Kind.POLICY_DENIED, "" + why + " (no approver configured)");
      }
      Decision decision;
      try {
        decision = approver.decide(new ApprovalRequest(request, why));
      } catch (Exception e) {
        throw approverFailed(request.command(), e);
      }
      if (decision != Decision.ALLOW) {
        throw SandboxException.of(
            SandboxException.Kind.POLICY_DENIED,
            "execution of " + Quote.of(request.command()) + " denied: " + why);
      }
      return;
    }
  }

  /**
   * Fail-closed on an approver failure. The failure is not a denial: the wrapper is INTERNAL and
   * the approver's own kinds stay visible through the cause chain.
   */
  private static SandboxException approverFailed(String command, Exception cause) {
    return SandboxException.of(
        SandboxException.Kind.INTERNAL,
        "approval for "
            + Quote.of(command)
            + " failed; not executed (fail-closed): "
            + cause.getMessage(),
        cause);
  }
}
