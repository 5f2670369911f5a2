package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.testing.FakeRunner;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WithApprovalTest {
  private final FakeRunner inner = new FakeRunner();
  private final List<ApprovalRequest> asked = new ArrayList<>();

  private Approver answering(Decision d) {
    return req -> {
      asked.add(req);
      return d;
    };
  }

  private static ExecPredicate matching(String reason) {
    return r -> Optional.of(reason);
  }

  private static final ExecPredicate NEVER = r -> Optional.empty();

  private static SandboxException.Kind kindOf(Throwable t) {
    return ((SandboxException) t).kind();
  }

  @Test
  void noMatchRunsWithoutAskingTheApprover() {
    Runner r = Runners.withApproval(inner, answering(Decision.DENY), NEVER, NEVER);
    r.exec("ls", List.of(), null);
    assertThat(asked).isEmpty();
    assertThat(inner.callCount()).isEqualTo(1);
  }

  @Test
  void noPredicatesRunsEverything() {
    Runners.withApproval(inner, answering(Decision.DENY)).exec("rm", List.of("-rf", "/"), null);
    assertThat(asked).isEmpty();
    assertThat(inner.callCount()).isEqualTo(1);
  }

  @Test
  void firstMatchingPredicateDecidesAndItsReasonReachesTheApprover() {
    Runner r =
        Runners.withApproval(
            inner, answering(Decision.ALLOW), NEVER, matching("first"), matching("second"));
    ExecOptions opts = ExecOptions.builder().workDir("w").build();
    r.exec("git", List.of("push"), opts);
    assertThat(asked).hasSize(1);
    assertThat(asked.get(0).reason()).isEqualTo("first");
    assertThat(asked.get(0).exec()).isEqualTo(new ExecRequest("git", List.of("push"), opts, false));
  }

  @Test
  void allowStopsEvaluationSoALaterNullPredicateIsNeverReached() {
    Runner r =
        Runners.withApproval(inner, answering(Decision.ALLOW), matching("m"), null, matching("x"));
    r.exec("ls", List.of(), null);
    assertThat(asked).hasSize(1);
    assertThat(inner.callCount()).isEqualTo(1);
  }

  @Test
  void reachingANullPredicateFailsClosed() {
    Runner r = Runners.withApproval(inner, answering(Decision.ALLOW), NEVER, null);
    assertThatThrownBy(() -> r.exec("ls", List.of(), null))
        .isInstanceOf(SandboxException.class)
        .hasMessage("sandbox: null approval predicate configured (fail-closed)")
        .extracting(WithApprovalTest::kindOf)
        .isEqualTo(SandboxException.Kind.POLICY_DENIED);
    assertThat(inner.callCount()).isZero();
  }

  @Test
  void denialIsPolicyDeniedWithTheReason() {
    Runner r = Runners.withApproval(inner, answering(Decision.DENY), matching("too risky"));
    assertThatThrownBy(() -> r.exec("rm", List.of(), null))
        .hasMessage("sandbox: execution of \"rm\" denied: too risky")
        .extracting(WithApprovalTest::kindOf)
        .isEqualTo(SandboxException.Kind.POLICY_DENIED);
    assertThat(inner.callCount()).isZero();
  }

  @Test
  void aNullDecisionDenies() {
    Runner r = Runners.withApproval(inner, req -> null, matching("why"));
    assertThatThrownBy(() -> r.exec("rm", List.of(), null))
        .extracting(WithApprovalTest::kindOf)
        .isEqualTo(SandboxException.Kind.POLICY_DENIED);
    assertThat(inner.callCount()).isZero();
  }

  @Test
  void noApproverFailsClosedOnAMatch() {
    Runner r = Runners.withApproval(inner, null, matching("needs a human"));
    assertThatThrownBy(() -> r.exec("rm", List.of(), null))
        .hasMessage("sandbox: needs a human (no approver configured)")
        .extracting(WithApprovalTest::kindOf)
        .isEqualTo(SandboxException.Kind.POLICY_DENIED);
    // Without a match the missing approver is never needed.
    Runners.withApproval(inner, null, NEVER).exec("ls", List.of(), null);
    assertThat(inner.callCount()).isEqualTo(1);
  }

  @Test
  void approverFailureFailsClosedButIsNotADenial() {
    IllegalStateException boom = new IllegalStateException("approval service down");
    Runner r =
        Runners.withApproval(
            inner,
            req -> {
              throw boom;
            },
            matching("m"));
    assertThatThrownBy(() -> r.exec("deploy", List.of(), null))
        .isInstanceOf(SandboxException.class)
        .hasMessage(
            "sandbox: approval for \"deploy\" failed; not executed (fail-closed): approval service"
                + " down")
        .hasCause(boom)
        .satisfies(
            e -> {
              assertThat(kindOf(e)).isEqualTo(SandboxException.Kind.INTERNAL);
              assertThat(SandboxException.hasKind(e, SandboxException.Kind.POLICY_DENIED))
                  .isFalse();
            });
    assertThat(inner.callCount()).isZero();
  }

  @Test
  void approverFailureKeepsTheApproversOwnKindInTheChain() {
    SandboxException timeout =
        new SandboxException(SandboxException.Kind.TIMEOUT, "human did not answer");
    Runner r =
        Runners.withApproval(
            inner,
            req -> {
              throw timeout;
            },
            matching("m"));
    assertThatThrownBy(() -> r.exec("deploy", List.of(), null))
        .satisfies(
            e -> {
              assertThat(SandboxException.hasKind(e, SandboxException.Kind.TIMEOUT)).isTrue();
              assertThat(SandboxException.httpStatus(e)).isEqualTo(504);
            });
  }

  @Test
  void predicatesAndApproversSeeAnImmutableViewAndTheInnerGetsTheOriginal() {
    byte[] stdin = {1, 2, 3};
    ExecOptions opts = ExecOptions.builder().stdin(stdin).env(EnvPolicy.allow("A")).build();
    ExecPredicate meddler =
        req -> {
          req.options().stdin()[0] = 9;
          try {
            req.args().add("--evil");
          } catch (UnsupportedOperationException expected) {
            // the view cannot be changed
          }
          return Optional.of("m");
        };
    Runner r =
        Runners.withApproval(
            inner,
            req -> {
              req.exec().options().stdin()[1] = 9;
              return Decision.ALLOW;
            },
            meddler);

    r.exec("cat", List.of("x"), opts);

    ExecRequest got = inner.lastRequest();
    assertThat(got.args()).containsExactly("x");
    assertThat(got.options().stdin()).containsExactly(1, 2, 3);
    assertThat(got.options()).isEqualTo(opts);
  }

  @Test
  void everyCallIsDecidedAfresh() {
    AtomicInteger calls = new AtomicInteger();
    Runner r =
        Runners.withApproval(
            inner,
            req -> calls.incrementAndGet() % 2 == 1 ? Decision.ALLOW : Decision.DENY,
            matching("m"));
    r.exec("a", List.of(), null);
    assertThatThrownBy(() -> r.exec("a", List.of(), null)).isInstanceOf(SandboxException.class);
    r.exec("a", List.of(), null);
    assertThat(calls).hasValue(3);
    assertThat(inner.callCount()).isEqualTo(2);
  }

  @Test
  void reportsTheInnerEnforcementExactly() {
    Enforcement e = Enforcement.builder().filesystemBounds(true).build();
    inner.reporting(e);
    assertThat(Enforcement.of(Runners.withApproval(inner, null))).isEqualTo(e);
  }
}
