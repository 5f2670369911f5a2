package dev.confine.net;

import dev.confine.NetAction;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.SandboxException;
import java.util.ArrayList;
import java.util.List;

/**
 * A policy's rules, compiled once: the policy's {@code rules} in order, then its {@code allowHosts}
 * as allow rules on any port. Matching takes two passes, so that a matching deny always wins
 * whatever its position: the first matching deny, else the first matching rule of any action, else
 * no match (the caller applies the mode's default).
 */
final class RuleMatcher {
  private final List<Compiled> nameRules;
  private final List<Compiled> ipRules;

  private RuleMatcher(List<Compiled> nameRules, List<Compiled> ipRules) {
    this.nameRules = nameRules;
    this.ipRules = ipRules;
  }

  /** A rule's outcome: the action, the rule's description, and whether any rule matched. */
  public record Match(NetAction action, String rule, boolean matched) {
    static final Match NONE = new Match(NetAction.ALLOW, "", false);
  }

  private record Compiled(NetAction action, HostPattern pattern, int port, String description) {
    boolean matchesPort(int p) {
      return port == 0 || port == p;
    }
  }

  /**
   * Compiles {@code policy}'s rules and allow hosts.
   *
   * @throws SandboxException VALIDATION {@code net rule i: <problem>} or {@code allow_hosts entry
   *     "h": <problem>} for the first pattern that does not compile
   */
  public static RuleMatcher compile(NetPolicy policy) {
    List<Compiled> names = new ArrayList<>();
    List<Compiled> ips = new ArrayList<>();
    List<NetRule> rules = policy.rules();
    for (int i = 0; i < rules.size(); i++) {
      NetRule r = rules.get(i);
      HostPattern pattern;
      try {
        pattern = HostPattern.compile(r.host());
      } catch (IllegalArgumentException e) {
        throw SandboxException.of(
            SandboxException.Kind.VALIDATION, "net rule " + i + ": " + e.getMessage());
      }
      add(new Compiled(r.action(), pattern, r.port(), r.toString()), names, ips);
    }
    for (String host : policy.allowHosts()) {
      HostPattern pattern;
      try {
        pattern = HostPattern.compile(host);
      } catch (IllegalArgumentException e) {
        throw SandboxException.of(
            SandboxException.Kind.VALIDATION,
            "allow_hosts entry " + Texts.quote(host) + ": " + e.getMessage());
      }
      add(new Compiled(NetAction.ALLOW, pattern, 0, NetRule.allow(host).toString()), names, ips);
    }
    return new RuleMatcher(List.copyOf(names), List.copyOf(ips));
  }

  private static void add(Compiled c, List<Compiled> names, List<Compiled> ips) {
    (c.pattern().isIp() ? ips : names).add(c);
  }

  /** Whether any rule is an IP literal or CIDR prefix. */
  public boolean hasIpRules() {
    return !ipRules.isEmpty();
  }

  /** Whether any IP literal or CIDR rule allows. */
  public boolean hasIpAllowRules() {
    return ipRules.stream().anyMatch(c -> c.action() == NetAction.ALLOW);
  }

  /** The rules for a normalised host name ({@link HostNames#normalise}) and port. */
  public Match match(String normalisedHost, int port) {
    for (Compiled c : nameRules) {
      if (c.action() == NetAction.DENY
          && c.matchesPort(port)
          && c.pattern().matchesName(normalisedHost)) {
        return new Match(NetAction.DENY, c.description(), true);
      }
    }
    for (Compiled c : nameRules) {
      if (c.matchesPort(port) && c.pattern().matchesName(normalisedHost)) {
        return new Match(c.action(), c.description(), true);
      }
    }
    return Match.NONE;
  }

  /** The IP and CIDR rules for an address (4 or 16 bytes, IPv4-mapped unmapped) and port. */
  public Match matchAddress(byte[] address, int port) {
    for (Compiled c : ipRules) {
      if (c.action() == NetAction.DENY
          && c.matchesPort(port)
          && c.pattern().matchesAddress(address)) {
        return new Match(NetAction.DENY, c.description(), true);
      }
    }
    for (Compiled c : ipRules) {
      if (c.matchesPort(port) && c.pattern().matchesAddress(address)) {
        return new Match(c.action(), c.description(), true);
      }
    }
    return Match.NONE;
  }
}
