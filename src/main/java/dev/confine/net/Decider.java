package dev.confine.net;

import dev.confine.NetAction;
import dev.confine.NetMode;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Decides destinations (seed §13.2, with Confine's changes): a matching hostname deny wins, then a
 * matching IP deny on any address the name resolves to, then a hostname or IP allow, then the
 * mode's default (ALLOW_LIST denies, PROXY allows).
 *
 * <p>Where Confine differs from the seed: a connection made by the proxy itself always goes to an
 * address the rules checked (the name is resolved once, here, and never again by a connect); an
 * address that is not public ({@link SpecialAddresses}: loopback, link-local and so cloud metadata,
 * private, CGNAT, multicast, unspecified, ...) is reached only when an IP or CIDR rule allows it,
 * whether the client named it or a name resolved to it; and a name the decision does not depend on
 * is not resolved at all (no DNS lookup for what is denied anyway). With an upstream proxy the
 * upstream connects, so a name goes to it as a name unless IP rules need the checked address; the
 * name is still resolved here first when it can be, so that one resolving to a non-public address
 * is refused.
 */
final class Decider {
  private final NetMode mode;
  private final RuleMatcher matcher;
  private final HostResolver resolver;
  private final Executor resolverThreads;
  private final boolean viaUpstream;

  Decider(
      NetMode mode,
      RuleMatcher matcher,
      HostResolver resolver,
      Executor resolverThreads,
      boolean viaUpstream) {
    this.mode = mode;
    this.matcher = matcher;
    this.resolver = resolver;
    this.resolverThreads = resolverThreads;
    this.viaUpstream = viaUpstream;
  }

  /**
   * Decides {@code host:port}; completes on a resolver thread when a name had to be resolved, at
   * once otherwise. Never completes exceptionally.
   */
  CompletableFuture<Verdict> decide(ProxyProtocol protocol, String host, int port) {
    Optional<byte[]> literal = HostNames.ipLiteral(host);
    if (literal.isPresent()) {
      return CompletableFuture.completedFuture(decideAddress(protocol, host, literal.get(), port));
    }
    String name;
    try {
      name = HostNames.normalise(host);
    } catch (IllegalArgumentException e) {
      return CompletableFuture.completedFuture(
          verdict(
              protocol,
              host,
              port,
              Verdict.Outcome.INVALID,
              "",
              "invalid host: " + e.getMessage()));
    }
    RuleMatcher.Match byName = matcher.match(name, port);
    if (byName.matched() && byName.action() == NetAction.DENY) {
      return CompletableFuture.completedFuture(
          deniedByRule(protocol, host, port, byName.rule(), ""));
    }
    boolean mayAllow = byName.matched() || mode == NetMode.PROXY || matcher.hasIpAllowRules();
    if (!mayAllow) {
      return CompletableFuture.completedFuture(notInAllowList(protocol, host, port));
    }
    return CompletableFuture.supplyAsync(
            () -> resolveAndDecide(protocol, host, name, port, byName), resolverThreads)
        .exceptionally(
            e ->
                verdict(
                    protocol, host, port, Verdict.Outcome.UNREACHABLE, "", "cannot decide: " + e));
  }

  private Verdict decideAddress(ProxyProtocol protocol, String host, byte[] address, int port) {
    String text = HostNames.format(address);
    RuleMatcher.Match m = matcher.matchAddress(address, port);
    if (m.matched() && m.action() == NetAction.DENY) {
      return deniedByRule(protocol, host, port, m.rule(), "");
    }
    if (m.matched()) {
      return allowed(
          protocol,
          host,
          port,
          m.rule(),
          "allowed by rule " + Texts.quote(m.rule()),
          List.of(at(address, port)),
          text);
    }
    Optional<String> kind = SpecialAddresses.kind(address);
    if (kind.isPresent()) {
      return verdict(
          protocol,
          host,
          port,
          Verdict.Outcome.DENY,
          "",
          text + " is a " + kind.get() + " address: only an IP or CIDR rule can allow it");
    }
    if (mode == NetMode.PROXY) {
      return allowed(
          protocol, host, port, "", "allowed by the proxy mode", List.of(at(address, port)), text);
    }
    return notInAllowList(protocol, host, port);
  }

  private Verdict resolveAndDecide(
      ProxyProtocol protocol, String host, String name, int port, RuleMatcher.Match byName) {
    List<InetAddress> addresses;
    try {
      addresses = resolver.resolve(name);
    } catch (UnknownHostException | RuntimeException e) {
      if (viaUpstream && !matcher.hasIpRules() && (byName.matched() || mode == NetMode.PROXY)) {
        // The upstream may resolve what this host cannot; no IP rule needs the address.
        return allowed(
            protocol,
            host,
            port,
            byName.rule(),
            allowReason(byName),
            List.of(InetSocketAddress.createUnresolved(name, Math.max(port, 0))),
            "");
      }
      return verdict(
          protocol,
          host,
          port,
          Verdict.Outcome.UNREACHABLE,
          "",
          "cannot resolve " + name + ": " + describe(e));
    }
    List<InetSocketAddress> kept = new ArrayList<>();
    String ipAllowRule = null;
    String refusedKind = null;
    String refusedAddress = null;
    for (InetAddress a : addresses) {
      byte[] bytes = HostNames.unmapped(a.getAddress());
      RuleMatcher.Match m = matcher.matchAddress(bytes, port);
      if (m.matched() && m.action() == NetAction.DENY) {
        return deniedByRule(
            protocol,
            host,
            port,
            m.rule(),
            name + " resolves to " + HostNames.format(bytes) + ", ");
      }
      if (m.matched()) {
        ipAllowRule = ipAllowRule == null ? m.rule() : ipAllowRule;
        kept.add(at(bytes, port));
        continue;
      }
      Optional<String> kind = SpecialAddresses.kind(bytes);
      if (kind.isPresent()) {
        refusedKind = refusedKind == null ? kind.get() : refusedKind;
        refusedAddress = refusedAddress == null ? HostNames.format(bytes) : refusedAddress;
        continue;
      }
      kept.add(at(bytes, port));
    }
    if (kept.isEmpty()) {
      String why =
          refusedKind == null
              ? name + " has no address"
              : name
                  + " resolves only to non-public addresses ("
                  + refusedAddress
                  + " is "
                  + refusedKind
                  + "): only an IP or CIDR rule can allow them";
      return verdict(
          protocol,
          host,
          port,
          refusedKind == null ? Verdict.Outcome.UNREACHABLE : Verdict.Outcome.DENY,
          "",
          why);
    }
    String rule;
    String reason;
    if (byName.matched()) {
      rule = byName.rule();
      reason = allowReason(byName);
    } else if (ipAllowRule != null) {
      rule = ipAllowRule;
      reason = "allowed by rule " + Texts.quote(ipAllowRule);
    } else if (mode == NetMode.PROXY) {
      rule = "";
      reason = "allowed by the proxy mode";
    } else {
      return notInAllowList(protocol, host, port);
    }
    List<InetSocketAddress> targets =
        viaUpstream && !matcher.hasIpRules()
            ? List.of(InetSocketAddress.createUnresolved(name, Math.max(port, 0)))
            : List.copyOf(kept);
    String shown =
        targets.get(0).isUnresolved() ? "" : targets.get(0).getAddress().getHostAddress();
    return allowed(protocol, host, port, rule, reason, targets, shown);
  }

  private String allowReason(RuleMatcher.Match byName) {
    return byName.matched()
        ? "allowed by rule " + Texts.quote(byName.rule())
        : "allowed by the proxy mode";
  }

  private Verdict deniedByRule(
      ProxyProtocol protocol, String host, int port, String rule, String before) {
    return verdict(
        protocol,
        host,
        port,
        Verdict.Outcome.DENY,
        rule,
        before + "denied by rule " + Texts.quote(rule));
  }

  private Verdict notInAllowList(ProxyProtocol protocol, String host, int port) {
    return verdict(protocol, host, port, Verdict.Outcome.DENY, "", "not in the allow-list");
  }

  private Verdict allowed(
      ProxyProtocol protocol,
      String host,
      int port,
      String rule,
      String reason,
      List<InetSocketAddress> targets,
      String address) {
    return new Verdict(
        new ProxyDecision(
            protocol, host, Math.max(port, 0), NetAction.ALLOW, rule, mode, reason, address),
        Verdict.Outcome.ALLOW,
        targets);
  }

  private Verdict verdict(
      ProxyProtocol protocol,
      String host,
      int port,
      Verdict.Outcome outcome,
      String rule,
      String reason) {
    return new Verdict(
        new ProxyDecision(
            protocol, host, Math.max(port, 0), NetAction.DENY, rule, mode, reason, ""),
        outcome,
        List.of());
  }

  private static InetSocketAddress at(byte[] address, int port) {
    try {
      return new InetSocketAddress(InetAddress.getByAddress(address), Math.max(port, 0));
    } catch (UnknownHostException e) {
      throw new IllegalStateException("address of length " + address.length, e);
    }
  }

  private static String describe(Exception e) {
    return e instanceof UnknownHostException ? "no such host" : String.valueOf(e.getMessage());
  }
}
