package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.NetAction;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.SandboxException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rule matcher (seed §12.2): two passes, deny wins, ports, descriptions, compile errors. */
class RuleMatcherTest {

  private static RuleMatcher of(NetRule... rules) {
    return RuleMatcher.compile(NetPolicy.allowList(rules));
  }

  private static byte[] ip(String literal) {
    return HostNames.ipLiteral(literal).orElseThrow();
  }

  @Test
  void aDenyAnywhereWinsOverAnEarlierAllow() {
    RuleMatcher m = of(NetRule.allow("example.com"), NetRule.deny("api.example.com"));
    assertThat(m.match("api.example.com", 443))
        .isEqualTo(new RuleMatcher.Match(NetAction.DENY, "deny api.example.com", true));
    assertThat(m.match("www.example.com", 443))
        .isEqualTo(new RuleMatcher.Match(NetAction.ALLOW, "allow example.com", true));
  }

  @Test
  void portsRestrictRulesAndAppearInDescriptions() {
    RuleMatcher m = of(NetRule.allow("example.com", 443), NetRule.deny("example.com", 80));
    assertThat(m.match("example.com", 443).rule()).isEqualTo("allow example.com:443");
    assertThat(m.match("example.com", 80).action()).isEqualTo(NetAction.DENY);
    assertThat(m.match("example.com", 8080).matched()).isFalse();
  }

  /** A DNS question names no port: any allow rule counts, a deny only when it names no port. */
  @Test
  void anyPortMatchesEveryAllowAndOnlyPortlessDenies() {
    RuleMatcher m =
        of(
            NetRule.allow("example.com", 443),
            NetRule.deny("example.com", 80),
            NetRule.deny("bad.example.com"),
            NetRule.allow("127.0.0.1", 8080));
    int any = RuleMatcher.ANY_PORT;
    assertThat(m.match("example.com", any).action()).isEqualTo(NetAction.ALLOW);
    assertThat(m.match("bad.example.com", any).action()).isEqualTo(NetAction.DENY);
    assertThat(m.match("other.org", any).matched()).isFalse();
    assertThat(m.matchAddress(new byte[] {127, 0, 0, 1}, any).action()).isEqualTo(NetAction.ALLOW);
  }

  @Test
  void noMatchIsNotMatchedWhateverTheActionSays() {
    RuleMatcher.Match none = of(NetRule.allow("example.com")).match("other.org", 443);
    assertThat(none.matched()).isFalse();
    assertThat(none.rule()).isEmpty();
  }

  @Test
  void ipRulesMatchOnlyAddressesAndNameRulesOnlyNames() {
    RuleMatcher m = of(NetRule.allow("10.0.0.0/8"), NetRule.deny("10.1.0.0/16", 22));
    assertThat(m.hasIpRules()).isTrue();
    assertThat(m.hasIpAllowRules()).isTrue();
    assertThat(m.match("10.0.0.1", 80).matched()).isFalse();
    assertThat(m.matchAddress(ip("10.2.0.1"), 80).action()).isEqualTo(NetAction.ALLOW);
    assertThat(m.matchAddress(ip("10.1.0.1"), 22))
        .isEqualTo(new RuleMatcher.Match(NetAction.DENY, "deny 10.1.0.0/16:22", true));
    assertThat(m.matchAddress(ip("10.1.0.1"), 23).action()).isEqualTo(NetAction.ALLOW);
    assertThat(of(NetRule.deny("10.0.0.0/8")).hasIpAllowRules()).isFalse();
    assertThat(of(NetRule.allow("example.com")).hasIpRules()).isFalse();
  }

  @Test
  void allowHostsComeAfterTheRulesAsAllowsOnAnyPort() {
    NetPolicy policy =
        NetPolicy.builder()
            .mode(NetMode.ALLOW_LIST)
            .rules(NetRule.deny("bad.example.com"))
            .allowHosts(List.of("example.com"))
            .build();
    RuleMatcher m = RuleMatcher.compile(policy);
    assertThat(m.match("example.com", 1234).rule()).isEqualTo("allow example.com");
    assertThat(m.match("bad.example.com", 443).action()).isEqualTo(NetAction.DENY);
  }

  @Test
  void anInvalidPatternIsValidationNamingTheRuleOrEntry() {
    assertThatThrownBy(() -> of(NetRule.allow("ok.com"), NetRule.allow("a*b.example")))
        .isInstanceOf(SandboxException.class)
        .hasMessageStartingWith("sandbox: net rule 1: ")
        .satisfies(
            e ->
                assertThat(((SandboxException) e).kind())
                    .isEqualTo(SandboxException.Kind.VALIDATION));
    NetPolicy policy =
        NetPolicy.builder().mode(NetMode.ALLOW_LIST).allowHosts(List.of("*.")).build();
    assertThatThrownBy(() -> RuleMatcher.compile(policy))
        .hasMessageStartingWith("sandbox: allow_hosts entry \"*.\": ");
  }

  @Test
  void descriptionsKeepTheHostAsWritten() {
    assertThat(of(NetRule.allow("Example.COM")).match("example.com", 1).rule())
        .isEqualTo("allow Example.COM");
  }
}
