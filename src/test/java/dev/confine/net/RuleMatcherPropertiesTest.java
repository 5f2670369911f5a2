package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.NetAction;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The matcher's suffix index answers exactly as scanning every rule in order would (the seed's two
 * passes), for random rule lists and hosts over a small alphabet of labels.
 */
class RuleMatcherPropertiesTest {

  @Property(tries = 2000)
  void theIndexAnswersLikeAScanOfEveryRule(
      @ForAll("rules") List<NetRule> rules,
      @ForAll("hosts") String host,
      @ForAll("ports") int port) {
    RuleMatcher.Match indexed =
        RuleMatcher.compile(NetPolicy.allowList(rules.toArray(NetRule[]::new))).match(host, port);
    assertThat(indexed).isEqualTo(scan(rules, host, port));
  }

  private static RuleMatcher.Match scan(List<NetRule> rules, String host, int port) {
    for (NetRule r : rules) {
      if (r.action() == NetAction.DENY && applies(r, host, port)) {
        return new RuleMatcher.Match(NetAction.DENY, r.toString(), true);
      }
    }
    for (NetRule r : rules) {
      if (applies(r, host, port)) {
        return new RuleMatcher.Match(r.action(), r.toString(), true);
      }
    }
    return new RuleMatcher.Match(NetAction.ALLOW, "", false);
  }

  private static boolean applies(NetRule r, String host, int port) {
    return (r.port() == 0 || r.port() == port) && HostPattern.compile(r.host()).matchesName(host);
  }

  private static Arbitrary<String> name(int maxLabels) {
    return Arbitraries.of("a", "b", "ex", "com")
        .list()
        .ofMinSize(1)
        .ofMaxSize(maxLabels)
        .map(labels -> String.join(".", labels));
  }

  @Provide
  Arbitrary<List<NetRule>> rules() {
    Arbitrary<NetRule> rule =
        Combinators.combine(
                Arbitraries.of(NetAction.values()),
                Arbitraries.of(true, false),
                name(3),
                Arbitraries.of(0, 80, 443))
            .as(
                (action, wildcard, host, port) ->
                    new NetRule(action, (wildcard ? "*." : "") + host, port));
    return rule.list().ofMaxSize(12);
  }

  @Provide
  Arbitrary<String> hosts() {
    return name(4);
  }

  @Provide
  Arbitrary<Integer> ports() {
    return Arbitraries.of(80, 443, 8080);
  }
}
