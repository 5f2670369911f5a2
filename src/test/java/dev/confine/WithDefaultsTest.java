package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import dev.confine.testing.FakeRunner;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WithDefaultsTest {
  private final FakeRunner inner = new FakeRunner();

  @Test
  void aCallsStdinStreamReachesTheInnerRunnerAsItIs() {
    java.io.InputStream in = java.io.InputStream.nullInputStream();
    ExecOptions defaults = ExecOptions.builder().stdin(new byte[] {1}).build();
    Runner r =
        Runners.withApproval(
            Runners.allowCommands(Runners.withDefaults(inner, defaults), List.of("cat")),
            request -> Decision.ALLOW,
            ExecPredicate.commandPatterns("cat"));

    r.exec("cat", List.of(), ExecOptions.builder().stdinStream(in).build());
    assertThat(inner.lastRequest().options().stdinStream()).isSameAs(in);
    assertThat(inner.lastRequest().options().stdin()).isNull();

    r.exec("cat", List.of(), null); // no stdin of its own: the defaults' bytes
    assertThat(inner.lastRequest().options().stdinStream()).isNull();
    assertThat(inner.lastRequest().options().stdin()).containsExactly(1);
  }

  @Test
  void defaultsHoldingAStdinStreamAreRefused() {
    ExecOptions defaults =
        ExecOptions.builder().stdinStream(java.io.InputStream.nullInputStream()).build();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Runners.withDefaults(inner, defaults))
        .isInstanceOf(SandboxException.class)
        .hasMessageStartingWith("sandbox: default options cannot hold a stdin stream")
        .satisfies(
            e ->
                assertThat(((SandboxException) e).kind())
                    .isEqualTo(SandboxException.Kind.VALIDATION));
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> Runners.composeLocal(inner, new LocalPolicy(defaults, null, null, List.of())))
        .isInstanceOf(SandboxException.class);
  }

  @Test
  void innerReceivesTheMergedOptions() {
    ExecOptions defaults =
        ExecOptions.builder()
            .workDir("base")
            .timeout(Duration.ofSeconds(10))
            .env(EnvPolicy.allow("PATH", "HOME").withInject(Map.of("CI", "1")))
            .net(NetPolicy.denyAll())
            .resources(ResourceLimits.builder().memoryBytes(1 << 30).build())
            .build();
    Runner r = Runners.withDefaults(inner, defaults);
    ExecOptions call =
        ExecOptions.builder()
            .timeout(Duration.ofSeconds(60))
            .env(EnvPolicy.inheritAll().withInject(Map.of("X", "y")))
            .net(NetPolicy.defaults())
            .resources(ResourceLimits.builder().memoryBytes(1L << 40).maxProcesses(8).build())
            .build();

    r.exec("make", List.of("all"), call);

    ExecOptions got = inner.lastRequest().options();
    assertThat(got.workDir()).isEqualTo("base");
    assertThat(got.timeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(got.env().allow()).containsExactly("PATH", "HOME");
    assertThat(got.env().inject()).containsExactly(Map.entry("CI", "1"), Map.entry("X", "y"));
    assertThat(got.net().mode()).isEqualTo(NetMode.DENY_ALL);
    assertThat(got.resources().memoryBytes()).isEqualTo(1 << 30);
    assertThat(got.resources().maxProcesses()).isEqualTo(8);
    assertThat(inner.lastRequest().args()).containsExactly("all");
  }

  @Test
  void nullDefaultsAndNullCallOptionsAreTheDefaults() {
    Runners.withDefaults(inner, null).exec("true", null, null);
    assertThat(inner.lastRequest().options()).isEqualTo(ExecOptions.defaults());
    assertThat(inner.lastRequest().args()).isEmpty();
  }

  @Test
  void emptyDefaultsKeepANarrowerCallerPolicy() {
    // The seed would drop all three of these and run with the host env and network.
    Runner r = Runners.withDefaults(inner, ExecOptions.defaults());
    ExecOptions call =
        ExecOptions.builder()
            .env(EnvPolicy.none())
            .net(NetPolicy.denyAll())
            .resources(ResourceLimits.builder().maxOutputBytes(10).build())
            .build();
    r.exec("true", List.of(), call);
    assertThat(inner.lastRequest().options()).isEqualTo(call);
  }

  @Test
  void reportsTheInnerEnforcementExactly() {
    Enforcement e = Enforcement.builder().netModes(NetMode.DENY_ALL).pidsCap(true).build();
    inner.reporting(e);
    assertThat(Enforcement.of(Runners.withDefaults(inner, null))).isEqualTo(e);
  }

  @Test
  void nullInnerIsRejectedAtConstruction() {
    assertThatNullPointerException()
        .isThrownBy(() -> Runners.withDefaults(null, null))
        .withMessageContaining("inner runner");
  }
}
