package dev.confine.net;

import dev.confine.NetPolicy;
import dev.confine.NetRule;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The egress proxy's decision with 1,000 rules (names, wildcards, CIDR prefixes and denies mixed):
 * a name allowed by the last rule (resolved by an in-memory resolver, so the lookup itself is not
 * measured), a name denied without a lookup, and an IP literal. Target: at most 10 us each. Lives
 * in the proxy's package because the decider is internal.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class DecisionBench {
  private Decider decider;

  @Setup
  public void setUp() throws Exception {
    List<NetRule> rules = new ArrayList<>();
    for (int i = 0; i < 996; i++) {
      rules.add(
          switch (i % 4) {
            case 0 -> NetRule.allow("host" + i + ".example.com");
            case 1 -> NetRule.allow("*.zone" + i + ".example.org", 443);
            case 2 -> NetRule.deny("bad" + i + ".example.net");
            default -> NetRule.deny("10." + (i % 250) + ".0.0/16");
          });
    }
    rules.add(NetRule.allow("93.184.216.0/24", 8443));
    rules.add(NetRule.deny("evil.example"));
    rules.add(NetRule.allow("127.0.0.1", 8080));
    rules.add(NetRule.allow("last.example.com"));
    NetPolicy policy = NetPolicy.allowList(rules.toArray(NetRule[]::new));
    InetAddress address = InetAddress.getByAddress(new byte[] {93, (byte) 184, (byte) 216, 34});
    HostResolver resolver = host -> List.of(address);
    decider =
        new Decider(policy.mode(), RuleMatcher.compile(policy), resolver, Runnable::run, false);
  }

  @Benchmark
  public Verdict allowedNameMatchedByTheLastRule() {
    return decider.decide(ProxyProtocol.CONNECT, "api.last.example.com", 443).join();
  }

  @Benchmark
  public Verdict unlistedNameDeniedWithoutLookup() {
    return decider.decide(ProxyProtocol.CONNECT, "unlisted.example.io", 443).join();
  }

  @Benchmark
  public Verdict ipLiteral() {
    return decider.decide(ProxyProtocol.CONNECT, "127.0.0.1", 8080).join();
  }
}
