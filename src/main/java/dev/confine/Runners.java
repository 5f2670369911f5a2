package dev.confine;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * Decorators that put policy in front of any {@link Runner}, and the composition of a local policy.
 * Every decorator reports exactly its inner runner's {@link Enforcement} and {@link Capability}
 * rows: policy in front of a runner adds no enforcement of its own.
 */
public final class Runners {
  private Runners() {}

  /**
   * Runs only commands whose string is exactly one of {@code allowed} (no base-name normalisation:
   * {@code /usr/bin/echo} is not {@code echo}). A null or empty collection allows nothing. Others
   * fail with POLICY_DENIED and never reach {@code inner}.
   */
  public static Runner allowCommands(Runner inner, Collection<String> allowed) {
    return new AllowCommandsRunner(inner, allowed);
  }

  /**
   * Applies {@code defaults} to every call as a ceiling the call may narrow but never widen:
   *
   * <ul>
   *   <li>work dir: the call's if non-empty, else the defaults';
   *   <li>stdin: the call's if non-null (empty counts as set; a stream is passed on as it is), else
   *       the defaults' (defaults holding a stdin stream are refused with VALIDATION: one stream
   *       cannot serve every call);
   *   <li>timeout: the smaller of the positive ones;
   *   <li>env: allow-lists intersect (null = everything); injected variables are the defaults'
   *       overlaid by the call's;
   *   <li>net: with DEFAULT defaults the call's policy stands; otherwise the defaults', narrowed by
   *       the call's DENY_ALL, its added deny rules and a smaller unix-socket list; the call's
   *       allow rules, proxy and MITM are ignored;
   *   <li>resources: each cap is the smaller of the positive ones.
   * </ul>
   *
   * <p>The seed instead discards the call's env allow-list, network and resources, so a caller who
   * asked for less silently got more; Confine does not.
   */
  public static Runner withDefaults(Runner inner, ExecOptions defaults) {
    return new DefaultsRunner(inner, defaults);
  }

  /**
   * Asks {@code approver} before running requests that a predicate flags. Predicates are evaluated
   * in order on an immutable view of the request; the first that matches decides:
   *
   * <ul>
   *   <li>no approver: POLICY_DENIED "(no approver configured)";
   *   <li>the approver throws: the call fails closed with an INTERNAL error whose cause is the
   *       approver's failure (its kinds stay visible through {@link SandboxException#kindsOf});
   *   <li>the approver does not answer ALLOW: POLICY_DENIED naming the reason;
   *   <li>ALLOW: evaluation stops and the request runs unchanged.
   * </ul>
   *
   * <p>Reaching a null predicate fails closed with POLICY_DENIED. When no predicate matches, the
   * request runs without asking anyone.
   */
  public static Runner withApproval(Runner inner, Approver approver, ExecPredicate... predicates) {
    return new ApprovalRunner(inner, approver, Arrays.asList(predicates));
  }

  /** As {@link #withApproval(Runner, Approver, ExecPredicate...)}, with a list of predicates. */
  public static Runner withApproval(
      Runner inner, Approver approver, List<ExecPredicate> predicates) {
    return new ApprovalRunner(inner, approver, predicates);
  }

  /**
   * Composes {@code policy} around {@code backend}, inner to outer: the backend; {@link
   * #allowCommands} when the policy's allowed commands are non-null (empty blocks everything);
   * {@link #withApproval} when it has predicates (a null approver then fails closed on any match);
   * always {@link #withDefaults} outermost. The approver therefore sees the effective options, and
   * approval cannot get past the allow-list.
   */
  public static Runner composeLocal(Runner backend, LocalPolicy policy) {
    Objects.requireNonNull(policy, "policy");
    Runner r = requireInner(backend);
    if (policy.allowedCommands() != null) {
      r = allowCommands(r, policy.allowedCommands());
    }
    if (!policy.predicates().isEmpty()) {
      r = withApproval(r, policy.approver(), policy.predicates());
    }
    return withDefaults(r, policy.defaults());
  }

  static Runner requireInner(Runner inner) {
    return Objects.requireNonNull(inner, "the inner runner must not be null");
  }
}
