package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The ceiling rule of {@link Runners#withDefaults}: a call can narrow the defaults, never widen.
 */
class DefaultsMergePropertiesTest {

  @Property
  void envAllowNeverWidens(@ForAll("options") ExecOptions d, @ForAll("options") ExecOptions c) {
    List<String> merged = DefaultsMerge.merge(d, c).env().allow();
    if (d.env().allow() != null) {
      assertThat(merged).isNotNull();
      assertThat(d.env().allow()).containsAll(merged);
    }
    if (c.env().allow() != null) {
      assertThat(merged).isNotNull();
      assertThat(c.env().allow()).containsAll(merged);
    }
  }

  @Property
  void timeoutIsAtMostEitherPositiveSide(
      @ForAll("options") ExecOptions d, @ForAll("options") ExecOptions c) {
    Duration merged = DefaultsMerge.merge(d, c).timeout();
    for (Duration side : List.of(d.timeout(), c.timeout())) {
      if (!side.isZero()) {
        assertThat(merged).isPositive().isLessThanOrEqualTo(side);
      }
    }
  }

  @Property
  void everyCapIsAtMostEitherPositiveSide(
      @ForAll("options") ExecOptions d, @ForAll("options") ExecOptions c) {
    ResourceLimits m = DefaultsMerge.merge(d, c).resources();
    for (ResourceLimits side : List.of(d.resources(), c.resources())) {
      assertAtMost(m.cpuMillicores(), side.cpuMillicores());
      assertAtMost(m.memoryBytes(), side.memoryBytes());
      assertAtMost(m.diskBytes(), side.diskBytes());
      assertAtMost(m.maxOutputBytes(), side.maxOutputBytes());
      assertAtMost(m.maxProcesses(), side.maxProcesses());
    }
  }

  private static void assertAtMost(long merged, long side) {
    if (side > 0) {
      assertThat(merged).isPositive().isLessThanOrEqualTo(side);
    }
  }

  @Property
  void restrictedNetworkIsNeverWidened(
      @ForAll("options") ExecOptions d, @ForAll("options") ExecOptions c) {
    NetPolicy dn = d.net();
    NetPolicy m = DefaultsMerge.merge(d, c).net();
    if (dn.mode() == NetMode.DEFAULT) {
      assertThat(m).isEqualTo(c.net());
      return;
    }
    assertThat(m.mode()).isIn(dn.mode(), NetMode.DENY_ALL);
    if (dn.mode() == NetMode.DENY_ALL || c.net().mode() == NetMode.DENY_ALL) {
      assertThat(m.mode()).isEqualTo(NetMode.DENY_ALL);
    }
    assertThat(m.rules().subList(0, dn.rules().size())).isEqualTo(dn.rules());
    assertThat(m.rules().subList(dn.rules().size(), m.rules().size()))
        .allMatch(r -> r.action() == NetAction.DENY);
    assertThat(m.allowHosts()).isEqualTo(dn.allowHosts());
    assertThat(m.proxy()).isEqualTo(dn.proxy());
    assertThat(m.mitm()).isEqualTo(dn.mitm());
    assertThat(dn.unixSockets()).containsAll(m.unixSockets());
  }

  @Property
  void callerValuesThatCannotWidenPassThrough(
      @ForAll("options") ExecOptions d, @ForAll("options") ExecOptions c) {
    ExecOptions m = DefaultsMerge.merge(d, c);
    assertThat(m.workDir()).isEqualTo(c.workDir().isEmpty() ? d.workDir() : c.workDir());
    assertThat(m.stdin()).isEqualTo(c.hasStdin() ? c.stdin() : d.stdin());
    Set<String> injected = new HashSet<>(d.env().inject().keySet());
    injected.addAll(c.env().inject().keySet());
    assertThat(m.env().inject().keySet()).isEqualTo(injected);
    c.env().inject().forEach((k, v) -> assertThat(m.env().inject()).containsEntry(k, v));
  }

  @Provide
  Arbitrary<ExecOptions> options() {
    Arbitrary<String> workDir = Arbitraries.of("", "a", "/abs/b");
    Arbitrary<byte[]> stdin = Arbitraries.of(null, new byte[0], new byte[] {1, 2});
    Arbitrary<Duration> timeout = Arbitraries.longs().between(0, 5).map(Duration::ofSeconds);
    return Combinators.combine(workDir, stdin, timeout, env(), net(), resources())
        .as(ExecOptions::new);
  }

  private static Arbitrary<EnvPolicy> env() {
    Arbitrary<List<String>> allow =
        Arbitraries.of("A", "B", "C", "D").list().uniqueElements().ofMaxSize(4).injectNull(0.3);
    Arbitrary<java.util.Map<String, String>> inject =
        Arbitraries.maps(Arbitraries.of("X", "Y", "A"), Arbitraries.of("1", "2")).ofMaxSize(3);
    return Combinators.combine(allow, inject).as(EnvPolicy::new);
  }

  private static Arbitrary<NetPolicy> net() {
    Arbitrary<NetRule> rule =
        Combinators.combine(
                Arbitraries.of(NetAction.class),
                Arbitraries.of("a.example", "b.example", "10.0.0.0/8"),
                Arbitraries.of(0, 443))
            .as(NetRule::new);
    return Combinators.combine(
            Arbitraries.of(NetMode.class),
            Arbitraries.of("h1", "h2").list().ofMaxSize(2),
            rule.list().ofMaxSize(3),
            Arbitraries.of("", "http://p:1", "socks5://s:2"),
            Arbitraries.of("/run/a.sock", "/run/b.sock").list().uniqueElements().ofMaxSize(2),
            Arbitraries.of(MitmPolicy.all()).injectNull(0.5))
        .as(NetPolicy::new);
  }

  private static Arbitrary<ResourceLimits> resources() {
    Arbitrary<Integer> ints = Arbitraries.integers().between(0, 3).map(i -> i * 100);
    Arbitrary<Long> longs = Arbitraries.longs().between(0, 3).map(l -> l << 20);
    return Combinators.combine(ints, longs, longs, longs, ints).as(ResourceLimits::new);
  }
}
