package dev.confine.net;

import dev.confine.NetAction;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.SandboxException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A policy's rules, compiled once: the policy's {@code rules} in order, then its {@code allowHosts}
 * as allow rules on any port. Matching takes two passes, so that a matching deny always wins
 * whatever its position: the first matching deny, else the first matching rule of any action, else
 * no match (the caller applies the mode's default).
 */
final class RuleMatcher {
  private final Map<String, List<Compiled>> byName;
  private final Map<String, List<Compiled>> byWildcard;
  private final List<Compiled> ipRules;
  private final boolean ipAllowRules;

  private RuleMatcher(List<Compiled> nameRules, List<Compiled> ipRules) {
    this.byName = index(nameRules, false);
    this.byWildcard = index(nameRules, true);
    this.ipRules = ipRules;
    this.ipAllowRules = ipRules.stream().anyMatch(c -> c.action() == NetAction.ALLOW);
  }

  /** Name (or wildcard) rules by the name they are anchored at, each list in rule order. */
  private static Map<String, List<Compiled>> index(List<Compiled> rules, boolean wildcards) {
    Map<String, List<Compiled>> index = new HashMap<>();
    for (Compiled c : rules) {
      if (c.pattern() instanceof HostPattern.Name n && n.wildcard() == wildcards) {
        index.computeIfAbsent(n.base(), b -> new ArrayList<>()).add(c);
      }
    }
    return index;
  }

  /** A rule's outcome: the action, the rule's description, and whether any rule matched. */
  public record Match(NetAction action, String rule, boolean matched) {
    static final Match NONE = new Match(NetAction.ALLOW, "", false);
  }

  private record Compiled(
      int order, NetAction action, HostPattern pattern, int port, String description) {
    boolean matchesPort(int p) {
      return port == 0 || port == p || (p == ANY_PORT && action() == NetAction.ALLOW);
    }
  }

  /**
   * The port that stands for "some port" (a DNS question, which names none): every allow rule
   * matches it, a deny rule only when it names no port.
   */
  public static final int ANY_PORT = -1;

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
      add(new Compiled(i, r.action(), pattern, r.port(), r.toString()), names, ips);
    }
    int order = rules.size();
    for (String host : policy.allowHosts()) {
      HostPattern pattern;
      try {
        pattern = HostPattern.compile(host);
      } catch (IllegalArgumentException e) {
        throw SandboxException.of(
            SandboxException.Kind.VALIDATION,
            "allow_hosts entry " + Texts.quote(host) + ": " + e.getMessage());
      }
      add(
          new Compiled(order++, NetAction.ALLOW, pattern, 0, NetRule.allow(host).toString()),
          names,
          ips);
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
    return ipAllowRules;
  }

  /**
   * The rules for a normalised host name ({@link HostNames#normalise}) and port. Only the rules
   * anchored at one of the host's suffixes can match, so they are looked up by suffix (one hash
   * lookup per label) rather than scanned: the cost does not grow with the number of rules.
   */
  public Match match(String normalisedHost, int port) {
    Earliest found = new Earliest(port);
    int from = 0;
    while (true) {
      String suffix = normalisedHost.substring(from);
      found.consider(byName.get(suffix));
      if (from > 0) {
        found.consider(byWildcard.get(suffix));
      }
      int dot = normalisedHost.indexOf('.', from);
      if (dot < 0) {
        break;
      }
      from = dot + 1;
    }
    return found.match();
  }

  /** The earliest matching rule and the earliest matching deny among the candidates seen. */
  private static final class Earliest {
    private final int port;
    private Compiled first;
    private Compiled firstDeny;

    Earliest(int port) {
      this.port = port;
    }

    void consider(List<Compiled> candidates) {
      if (candidates == null) {
        return;
      }
      for (Compiled c : candidates) {
        if (c.matchesPort(port)) {
          first = earlier(first, c);
          firstDeny = c.action() == NetAction.DENY ? earlier(firstDeny, c) : firstDeny;
        }
      }
    }

    /** The first deny if any matched (a deny wins), else the first rule, else no match. */
    Match match() {
      Compiled chosen = firstDeny != null ? firstDeny : first;
      return chosen == null ? Match.NONE : new Match(chosen.action(), chosen.description(), true);
    }

    private static Compiled earlier(Compiled a, Compiled b) {
      return a == null || b.order() < a.order() ? b : a;
    }
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
