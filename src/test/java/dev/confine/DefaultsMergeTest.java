package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DefaultsMergeTest {
  private static ExecOptions merge(ExecOptions defaults, ExecOptions call) {
    return DefaultsMerge.merge(defaults, call);
  }

  @Test
  void workDirFromCallWhenSetElseDefaults() {
    ExecOptions d = ExecOptions.builder().workDir("d").build();
    assertThat(merge(d, ExecOptions.builder().workDir("c").build()).workDir()).isEqualTo("c");
    assertThat(merge(d, ExecOptions.defaults()).workDir()).isEqualTo("d");
    assertThat(merge(ExecOptions.defaults(), ExecOptions.defaults()).workDir()).isEmpty();
  }

  @Test
  void stdinFromCallWhenNonNullEvenIfEmpty() {
    byte[] dIn = "defaults".getBytes(StandardCharsets.UTF_8);
    ExecOptions d = ExecOptions.builder().stdin(dIn).build();
    assertThat(merge(d, ExecOptions.builder().stdin(new byte[0]).build()).stdin()).isEmpty();
    assertThat(merge(d, ExecOptions.builder().stdin(new byte[] {7}).build()).stdin())
        .containsExactly(7);
    assertThat(merge(d, ExecOptions.defaults()).stdin()).isEqualTo(dIn);
    assertThat(merge(ExecOptions.defaults(), ExecOptions.defaults()).hasStdin()).isFalse();
  }

  @Test
  void timeoutIsTheSmallerPositive() {
    Duration s1 = Duration.ofSeconds(1);
    Duration s5 = Duration.ofSeconds(5);
    assertThat(merge(timeout(s5), timeout(s1)).timeout()).isEqualTo(s1);
    assertThat(merge(timeout(s1), timeout(s5)).timeout()).isEqualTo(s1);
    assertThat(merge(timeout(s5), timeout(Duration.ZERO)).timeout()).isEqualTo(s5);
    assertThat(merge(timeout(Duration.ZERO), timeout(s5)).timeout()).isEqualTo(s5);
    assertThat(merge(timeout(Duration.ZERO), timeout(Duration.ZERO)).timeout()).isZero();
  }

  private static ExecOptions timeout(Duration d) {
    return ExecOptions.builder().timeout(d).build();
  }

  private static ExecOptions env(EnvPolicy e) {
    return ExecOptions.builder().env(e).build();
  }

  @Test
  void envAllowListsIntersectAndNullMeansEverything() {
    assertThat(merge(env(EnvPolicy.inheritAll()), env(EnvPolicy.inheritAll())).env().allow())
        .isNull();
    assertThat(merge(env(EnvPolicy.inheritAll()), env(EnvPolicy.allow("A"))).env().allow())
        .containsExactly("A");
    assertThat(merge(env(EnvPolicy.inheritAll()), env(EnvPolicy.none())).env().allow()).isEmpty();
    assertThat(merge(env(EnvPolicy.allow("A", "B")), env(EnvPolicy.inheritAll())).env().allow())
        .containsExactly("A", "B");
    assertThat(merge(env(EnvPolicy.allow("A", "B", "C")), env(EnvPolicy.allow("C", "A", "Z"))))
        .extracting(o -> o.env().allow())
        .isEqualTo(List.of("A", "C"));
    assertThat(merge(env(EnvPolicy.none()), env(EnvPolicy.allow("A"))).env().allow()).isEmpty();
    assertThat(merge(env(EnvPolicy.allow("A")), env(EnvPolicy.none())).env().allow()).isEmpty();
  }

  @Test
  void injectIsDefaultsOverlaidByCallInAFreshMap() {
    Map<String, String> dInject = new LinkedHashMap<>();
    dInject.put("A", "d");
    dInject.put("B", "d");
    ExecOptions d = env(EnvPolicy.inheritAll().withInject(dInject));
    ExecOptions c = env(EnvPolicy.inheritAll().withInject(Map.of("B", "c", "C", "c")));

    Map<String, String> merged = merge(d, c).env().inject();
    assertThat(merged)
        .containsExactly(Map.entry("A", "d"), Map.entry("B", "c"), Map.entry("C", "c"));
    assertThat(d.env().inject()).containsExactly(Map.entry("A", "d"), Map.entry("B", "d"));
    assertThat(merge(d, ExecOptions.defaults()).env().inject()).isEqualTo(dInject);
    assertThat(merge(ExecOptions.defaults(), ExecOptions.defaults()).env().inject()).isEmpty();
  }

  private static ExecOptions net(NetPolicy n) {
    return ExecOptions.builder().net(n).build();
  }

  @Test
  void netWithDefaultDefaultsTakesTheCallsPolicyWhole() {
    NetPolicy call =
        NetPolicy.builder()
            .mode(NetMode.ALLOW_LIST)
            .rules(NetRule.allow("example.com"), NetRule.deny("bad.example.com"))
            .proxy("http://proxy:3128")
            .unixSockets(List.of("/run/x.sock"))
            .mitm(MitmPolicy.all())
            .build();
    assertThat(merge(ExecOptions.defaults(), net(call)).net()).isEqualTo(call);
    assertThat(merge(ExecOptions.defaults(), net(NetPolicy.denyAll())).net().mode())
        .isEqualTo(NetMode.DENY_ALL);
  }

  @Test
  void netCallDenyAllReplacesAnyNarrowedMode() {
    NetPolicy d = NetPolicy.allowList(NetRule.allow("example.com"));
    NetPolicy merged = merge(net(d), net(NetPolicy.denyAll())).net();
    assertThat(merged.mode()).isEqualTo(NetMode.DENY_ALL);
    assertThat(merged.rules()).isEqualTo(d.rules());

    NetPolicy p = NetPolicy.proxy("socks5://up:1080");
    assertThat(merge(net(p), net(NetPolicy.denyAll())).net().mode()).isEqualTo(NetMode.DENY_ALL);
  }

  @Test
  void netCallCannotWidenAnAllowList() {
    NetPolicy d = NetPolicy.allowList(NetRule.allow("example.com"));
    NetPolicy call =
        NetPolicy.builder()
            .mode(NetMode.DEFAULT)
            .allowHosts(List.of("evil.example"))
            .rules(NetRule.allow("other.example"), NetRule.deny("api.example.com", 443))
            .proxy("http://elsewhere:8080")
            .mitm(MitmPolicy.all())
            .build();
    NetPolicy merged = merge(net(d), net(call)).net();
    assertThat(merged.mode()).isEqualTo(NetMode.ALLOW_LIST);
    assertThat(merged.rules())
        .containsExactly(NetRule.allow("example.com"), NetRule.deny("api.example.com", 443));
    assertThat(merged.allowHosts()).isEmpty();
    assertThat(merged.proxy()).isEmpty();
    assertThat(merged.mitm()).isNull();
  }

  @Test
  void netCallCannotLeaveDenyAll() {
    for (NetPolicy call :
        List.of(
            NetPolicy.defaults(),
            NetPolicy.allowList(NetRule.allow("example.com")),
            NetPolicy.proxy("http://p:1"))) {
      NetPolicy merged = merge(net(NetPolicy.denyAll()), net(call)).net();
      assertThat(merged.mode()).isEqualTo(NetMode.DENY_ALL);
      assertThat(merged.rules()).allMatch(r -> r.action() == NetAction.DENY);
      assertThat(merged.proxy()).isEmpty();
    }
  }

  @Test
  void netProxyDefaultsKeepTheirUpstreamAndGainCallDenies() {
    NetPolicy d = NetPolicy.proxy("http://corp:3128");
    NetPolicy merged =
        merge(net(d), net(NetPolicy.proxy("http://mine:1", NetRule.deny("x.example")))).net();
    assertThat(merged.mode()).isEqualTo(NetMode.PROXY);
    assertThat(merged.proxy()).isEqualTo("http://corp:3128");
    assertThat(merged.rules()).containsExactly(NetRule.deny("x.example"));
  }

  @Test
  void unixSocketsIntersectWhenTheCallNamesSome() {
    NetPolicy d =
        NetPolicy.builder()
            .mode(NetMode.ALLOW_LIST)
            .unixSockets(List.of("/run/a.sock", "/run/b.sock"))
            .build();
    NetPolicy narrower =
        NetPolicy.builder().unixSockets(List.of("/run/b.sock", "/run/c.sock")).build();
    assertThat(merge(net(d), net(narrower)).net().unixSockets()).containsExactly("/run/b.sock");
    assertThat(merge(net(d), net(NetPolicy.defaults())).net().unixSockets())
        .containsExactly("/run/a.sock", "/run/b.sock");
  }

  @Test
  void resourcesTakeTheSmallerPositiveCapPerField() {
    ResourceLimits d = new ResourceLimits(500, 1 << 20, 0, 4096, 0, 300);
    ResourceLimits c = new ResourceLimits(250, 1 << 30, 0, 0, 64, 0);
    ExecOptions merged =
        merge(
            ExecOptions.builder().resources(d).build(), ExecOptions.builder().resources(c).build());
    assertThat(merged.resources()).isEqualTo(new ResourceLimits(250, 1 << 20, 0, 4096, 64, 300));
    // The throttle is a cap like the others: a call may lower it, never raise or drop it.
    ResourceLimits lower = new ResourceLimits(0, 0, 0, 0, 0, 100);
    ResourceLimits higher = new ResourceLimits(0, 0, 0, 0, 0, 900);
    assertThat(
            merge(
                    ExecOptions.builder().resources(d).build(),
                    ExecOptions.builder().resources(lower).build())
                .resources()
                .cpuThrottleMillicores())
        .isEqualTo(100);
    assertThat(
            merge(
                    ExecOptions.builder().resources(d).build(),
                    ExecOptions.builder().resources(higher).build())
                .resources()
                .cpuThrottleMillicores())
        .isEqualTo(300);

    ResourceLimits none = ResourceLimits.NONE;
    assertThat(
            merge(
                    ExecOptions.builder().resources(none).build(),
                    ExecOptions.builder().resources(none).build())
                .resources())
        .isEqualTo(none);
    assertThat(
            merge(
                    ExecOptions.builder().resources(new ResourceLimits(0, 0, 9, 0, 0)).build(),
                    ExecOptions.builder().resources(new ResourceLimits(0, 0, 3, 0, 0)).build())
                .resources()
                .diskBytes())
        .isEqualTo(3);
  }

  @Test
  void mergeNeverMutatesItsInputs() {
    Map<String, String> inject = new HashMap<>(Map.of("K", "v"));
    ExecOptions d =
        ExecOptions.builder()
            .env(EnvPolicy.allow("A").withInject(inject))
            .net(NetPolicy.allowList(NetRule.allow("a")))
            .build();
    ExecOptions c =
        ExecOptions.builder()
            .env(EnvPolicy.allow("A").withInject(Map.of("K", "w")))
            .net(NetPolicy.allowList(NetRule.deny("b")))
            .build();
    ExecOptions dBefore = d.toBuilder().build();
    ExecOptions cBefore = c.toBuilder().build();
    merge(d, c);
    assertThat(d).isEqualTo(dBefore);
    assertThat(c).isEqualTo(cBefore);
  }
}
