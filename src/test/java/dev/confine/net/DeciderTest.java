package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.NetAction;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The decision procedure (seed §13.2) and Confine's changes: pinning to the checked address,
 * non-public addresses only by IP rule, no lookup for what is denied anyway, upstream names.
 */
class DeciderTest {
  private final List<String> lookups = new ArrayList<>();

  private final Map<String, List<String>> dns =
      Map.of(
          "public.test", List.of("93.184.216.34"),
          "api.public.test", List.of("93.184.216.35", "2606:2800::1"),
          "internal.test", List.of("10.1.2.3"),
          "metadata.test", List.of("169.254.169.254"),
          "mixed.test", List.of("127.0.0.1", "93.184.216.36"),
          "rebind.test", List.of("::ffff:127.0.0.1"));

  private final HostResolver resolver =
      host -> {
        lookups.add(host);
        List<String> addresses = dns.get(host);
        if (addresses == null) {
          throw new UnknownHostException(host);
        }
        List<InetAddress> out = new ArrayList<>();
        for (String a : addresses) {
          out.add(InetAddress.getByAddress(host, HostNames.ipLiteral(a).orElseThrow()));
        }
        return out;
      };

  private Verdict decide(NetPolicy policy, String host, int port) {
    return decide(policy, false, host, port);
  }

  private Verdict decide(NetPolicy policy, boolean viaUpstream, String host, int port) {
    Decider d =
        new Decider(
            policy.mode(), RuleMatcher.compile(policy), resolver, Runnable::run, viaUpstream);
    return d.decide(ProxyProtocol.CONNECT, host, port).join();
  }

  private static List<String> addresses(Verdict v) {
    return v.targets().stream().map(InetSocketAddress::getHostString).toList();
  }

  @Test
  void anAllowedNameIsPinnedToItsCheckedAddresses() {
    Verdict v = decide(NetPolicy.allowList(NetRule.allow("public.test")), "public.test", 443);
    assertThat(v.outcome()).isEqualTo(Verdict.Outcome.ALLOW);
    assertThat(v.decision().rule()).isEqualTo("allow public.test");
    assertThat(v.decision().address()).isEqualTo("93.184.216.34");
    assertThat(v.targets()).allSatisfy(t -> assertThat(t.isUnresolved()).isFalse());
    assertThat(addresses(v)).containsExactly("93.184.216.34");
    assertThat(v.targets().get(0).getPort()).isEqualTo(443);
  }

  @Test
  void aNameNotInTheAllowListIsDeniedWithoutALookup() {
    Verdict v = decide(NetPolicy.allowList(NetRule.allow("public.test")), "other.test", 443);
    assertThat(v.outcome()).isEqualTo(Verdict.Outcome.DENY);
    assertThat(v.decision().reason()).isEqualTo("not in the allow-list");
    assertThat(v.decision().mode()).isEqualTo(NetMode.ALLOW_LIST);
    assertThat(lookups).isEmpty();
  }

  @Test
  void aHostnameDenyWinsBeforeAnyLookup() {
    Verdict v = decide(NetPolicy.proxy("", NetRule.deny("public.test")), "api.public.test", 443);
    assertThat(v.outcome()).isEqualTo(Verdict.Outcome.DENY);
    assertThat(v.decision().rule()).isEqualTo("deny public.test");
    assertThat(v.decision().reason()).contains("denied by rule \"deny public.test\"");
    assertThat(lookups).isEmpty();
  }

  @Test
  void anIpDenyOnAnyResolvedAddressDenies() {
    NetPolicy policy =
        NetPolicy.allowList(NetRule.allow("public.test"), NetRule.deny("2606:2800::/32"));
    Verdict v = decide(policy, "api.public.test", 443);
    assertThat(v.outcome()).isEqualTo(Verdict.Outcome.DENY);
    assertThat(v.decision().rule()).isEqualTo("deny 2606:2800::/32");
    assertThat(v.decision().reason()).contains("resolves to 2606:2800::1");
  }

  @Test
  void anIpAllowAllowsAnUnlistedName() {
    Verdict v = decide(NetPolicy.allowList(NetRule.allow("93.184.216.0/24")), "public.test", 80);
    assertThat(v.outcome()).isEqualTo(Verdict.Outcome.ALLOW);
    assertThat(v.decision().rule()).isEqualTo("allow 93.184.216.0/24");
  }

  @Test
  void namesResolvingToNonPublicAddressesNeedAnIpRule() {
    NetPolicy names =
        NetPolicy.allowList(
            NetRule.allow("internal.test"),
            NetRule.allow("metadata.test"),
            NetRule.allow("rebind.test"));
    for (String host : List.of("internal.test", "metadata.test", "rebind.test")) {
      Verdict v = decide(names, host, 80);
      assertThat(v.outcome()).as(host).isEqualTo(Verdict.Outcome.DENY);
      assertThat(v.decision().reason()).as(host).contains("only an IP or CIDR rule can allow");
    }
    assertThat(decide(names, "metadata.test", 80).decision().reason())
        .contains("169.254.169.254 is link-local");
    NetPolicy withCidr =
        NetPolicy.allowList(NetRule.allow("internal.test"), NetRule.allow("10.0.0.0/8"));
    assertThat(decide(withCidr, "internal.test", 80).outcome()).isEqualTo(Verdict.Outcome.ALLOW);
  }

  @Test
  void nonPublicAddressesOfAMixedAnswerAreDroppedAndThePublicOnePinned() {
    Verdict v = decide(NetPolicy.allowList(NetRule.allow("mixed.test")), "mixed.test", 443);
    assertThat(v.outcome()).isEqualTo(Verdict.Outcome.ALLOW);
    assertThat(addresses(v)).containsExactly("93.184.216.36");
  }

  @Test
  void ipLiteralsAreDecidedByIpRulesAndTheMode() {
    assertThat(
            decide(NetPolicy.allowList(NetRule.allow("public.test")), "93.184.216.34", 443)
                .outcome())
        .isEqualTo(Verdict.Outcome.DENY);
    assertThat(decide(NetPolicy.proxy(""), "93.184.216.34", 443).outcome())
        .isEqualTo(Verdict.Outcome.ALLOW);
    Verdict metadata = decide(NetPolicy.proxy(""), "169.254.169.254", 80);
    assertThat(metadata.outcome()).isEqualTo(Verdict.Outcome.DENY);
    assertThat(metadata.decision().reason()).contains("link-local");
    assertThat(decide(NetPolicy.proxy(""), "[::1]", 80).outcome()).isEqualTo(Verdict.Outcome.DENY);
    assertThat(
            decide(NetPolicy.allowList(NetRule.allow("127.0.0.1", 8080)), "127.0.0.1", 8080)
                .outcome())
        .isEqualTo(Verdict.Outcome.ALLOW);
    assertThat(
            decide(NetPolicy.allowList(NetRule.allow("127.0.0.1", 8080)), "127.0.0.1", 8081)
                .outcome())
        .isEqualTo(Verdict.Outcome.DENY);
    assertThat(lookups).isEmpty();
  }

  @Test
  void theProxyModeAllowsAndPinsWhatNoRuleDenies() {
    Verdict v = decide(NetPolicy.proxy(""), "public.test", 443);
    assertThat(v.outcome()).isEqualTo(Verdict.Outcome.ALLOW);
    assertThat(v.decision().reason()).isEqualTo("allowed by the proxy mode");
    assertThat(v.decision().action()).isEqualTo(NetAction.ALLOW);
    assertThat(addresses(v)).containsExactly("93.184.216.34");
  }

  @Test
  void anUnresolvableNameIsUnreachableWhenConnectingDirectly() {
    Verdict v = decide(NetPolicy.allowList(NetRule.allow("nx.test")), "nx.test", 443);
    assertThat(v.outcome()).isEqualTo(Verdict.Outcome.UNREACHABLE);
    assertThat(v.decision().reason()).isEqualTo("cannot resolve nx.test: no such host");
  }

  @Test
  void throughAnUpstreamANameStaysANameButIsStillCheckedWhenItResolves() {
    NetPolicy policy = NetPolicy.proxy("http://127.0.0.1:3128");
    Verdict v = decide(policy, true, "public.test", 443);
    assertThat(v.outcome()).isEqualTo(Verdict.Outcome.ALLOW);
    assertThat(v.targets()).singleElement().satisfies(t -> assertThat(t.isUnresolved()).isTrue());
    assertThat(v.targets().get(0).getHostString()).isEqualTo("public.test");
    assertThat(decide(policy, true, "metadata.test", 80).outcome()).isEqualTo(Verdict.Outcome.DENY);
    Verdict unknown = decide(policy, true, "nx.test", 443);
    assertThat(unknown.outcome()).isEqualTo(Verdict.Outcome.ALLOW);
    assertThat(unknown.targets().get(0).getHostString()).isEqualTo("nx.test");
  }

  @Test
  void throughAnUpstreamIpRulesPinTheAddressAndFailClosed() {
    NetPolicy policy = NetPolicy.proxy("http://127.0.0.1:3128", NetRule.deny("10.0.0.0/8"));
    Verdict v = decide(policy, true, "public.test", 443);
    assertThat(v.targets().get(0).isUnresolved()).isFalse();
    assertThat(decide(policy, true, "nx.test", 443).outcome())
        .isEqualTo(Verdict.Outcome.UNREACHABLE);
  }

  @Test
  void invalidHostsAreInvalidNotDenied() {
    NetPolicy policy = NetPolicy.proxy("");
    for (String host : List.of("", "exa mple.com", "a..b", "x".repeat(300), "bad\u0007host")) {
      Verdict v = decide(policy, host, 80);
      assertThat(v.outcome()).as(host).isEqualTo(Verdict.Outcome.INVALID);
      assertThat(v.decision().reason()).startsWith("invalid host: ");
    }
  }

  @Test
  void unicodeNamesAreDecidedInPunycode() {
    NetPolicy policy =
        NetPolicy.allowList(NetRule.deny("münchen.example"), NetRule.allow("example"));
    assertThat(decide(policy, "MÜNCHEN.example.", 443).outcome()).isEqualTo(Verdict.Outcome.DENY);
    assertThat(decide(policy, "xn--mnchen-3ya.example", 443).outcome())
        .isEqualTo(Verdict.Outcome.DENY);
  }
}
