package dev.confine.net;

/**
 * Receives the egress proxy's audit events. Called on the proxy's network threads: keep it fast and
 * do not block (hand events to a queue if writing them is slow). What it throws is caught and
 * dropped, so that auditing never changes a decision.
 */
public interface ProxyAuditListener {
  /** A destination was allowed or denied. */
  default void decided(ProxyDecision decision) {}

  /** A connection the proxy made for an allowed destination was closed. */
  default void closed(ProxyConnection connection) {}
}
