package dev.confine.net;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * A decision with what the listener needs to act on it.
 *
 * @param decision what the audit sees
 * @param outcome how the client is answered
 * @param targets for an allowed destination, the addresses to try in order: resolved (pinned to
 *     what the rules checked) or, when an upstream proxy resolves the name, one unresolved address
 */
record Verdict(ProxyDecision decision, Outcome outcome, List<InetSocketAddress> targets) {

  /** How the client is answered. */
  enum Outcome {
    /** Connect to {@code targets}. */
    ALLOW,
    /** Refused by the policy: 403, SOCKS5 "not allowed by ruleset". */
    DENY,
    /** The request named no valid host: 400, SOCKS5 "host unreachable". */
    INVALID,
    /** The name could not be resolved: 502, SOCKS5 "host unreachable". */
    UNREACHABLE
  }
}
