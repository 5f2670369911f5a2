package dev.confine.net;

import dev.confine.NetAction;
import dev.confine.NetMode;

/**
 * One decision of the egress proxy: a client asked for {@code host:port} and was allowed or denied.
 *
 * @param protocol how the client asked
 * @param host the host as the client sent it (a name or an IP literal; empty when there was none)
 * @param port the port asked for (the protocol's default when the client gave none)
 * @param action allowed or denied
 * @param rule the rule that decided ({@code "allow example.com:443"}), or empty when the mode's
 *     default or a check other than the rules decided
 * @param mode the policy's mode
 * @param reason why, in words an agent can act on ({@code "not in the allow-list"})
 * @param address the address the proxy connects to ({@code 93.184.216.34}), or empty when denied or
 *     when an upstream proxy resolves the name
 */
public record ProxyDecision(
    ProxyProtocol protocol,
    String host,
    int port,
    NetAction action,
    String rule,
    NetMode mode,
    String reason,
    String address) {

  /** Whether the destination was allowed. */
  public boolean allowed() {
    return action == NetAction.ALLOW;
  }
}
