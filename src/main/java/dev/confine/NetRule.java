package dev.confine;

/**
 * One network rule: allow or deny a host pattern, on one port or on all ports.
 *
 * <p>Host forms: {@code example.com} matches the domain and every subdomain; {@code *.example.com}
 * only subdomains; an IPv4 or IPv6 literal matches exactly; {@code 10.0.0.0/8} matches a CIDR
 * prefix. Matching is case-insensitive, ignores one trailing dot and compares Unicode names in
 * punycode. Host syntax is checked when a backend compiles the rules, not by {@link
 * NetPolicy#validate()}.
 *
 * @param action allow or deny
 * @param host the host pattern
 * @param port the port, or 0 for any port
 */
public record NetRule(NetAction action, String host, int port) {

  /** Allows {@code host} on any port. */
  public static NetRule allow(String host) {
    return new NetRule(NetAction.ALLOW, host, 0);
  }

  /** Allows {@code host} on {@code port}. */
  public static NetRule allow(String host, int port) {
    return new NetRule(NetAction.ALLOW, host, port);
  }

  /** Denies {@code host} on any port. */
  public static NetRule deny(String host) {
    return new NetRule(NetAction.DENY, host, 0);
  }

  /** Denies {@code host} on {@code port}. */
  public static NetRule deny(String host, int port) {
    return new NetRule(NetAction.DENY, host, port);
  }

  /** The seed's rule description: {@code "allow example.com"} plus {@code ":port"} when set. */
  @Override
  public String toString() {
    return action + " " + host + (port != 0 ? ":" + port : "");
  }
}
