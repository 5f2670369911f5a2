package dev.confine;

/**
 * What an {@link Approver} is asked to decide.
 *
 * @param exec the request
 * @param reason why approval is needed: the reason of the predicate that matched
 */
public record ApprovalRequest(ExecRequest exec, String reason) {}
