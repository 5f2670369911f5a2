package dev.confine.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.Enforcement;
import dev.confine.EnforcementReporter;
import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.NoopRunner;
import dev.confine.ResourceLimits;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class ExecPolicyTest {

  private static final String DISK = "sandbox: disk limits not supported (no quota mechanism)";
  private static final String CPU_NEEDS_TIMEOUT =
      "sandbox: resources.cpuMillicores requires a per-call timeout to derive a CPU-time budget";
  private static final String NO_MEMORY = "sandbox: this runner cannot enforce a memory cap";
  private static final String NO_CPU = "sandbox: this runner cannot enforce a CPU budget";
  private static final String NO_PIDS = "sandbox: this runner cannot enforce a process cap";

  private static final Enforcement ALL_CAPS =
      Enforcement.builder().memoryCap(true).cpuCap(true).pidsCap(true).build();

  private static ExecOptions options(ResourceLimits limits, Duration timeout) {
    return ExecOptions.builder().resources(limits).timeout(timeout).build();
  }

  private static final long MIB = ResourceLimits.MIN_MEMORY_BYTES;

  private static ResourceLimits limits(int cpu, long memory, long disk, int pids) {
    return new ResourceLimits(cpu, memory, disk, 0, pids);
  }

  private static AbstractThrowableAssert<?, ? extends Throwable> assertUnavailable(
      ExecOptions options, Enforcement enforcement) {
    return assertThatThrownBy(() -> ExecPolicy.validate(options, enforcement))
        .isInstanceOf(SandboxException.class)
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.NOT_AVAILABLE));
  }

  // ---- validate ----

  @Test
  void noCapsAlwaysPassWithNothingEnforced() {
    assertThatCode(() -> ExecPolicy.validate(ExecOptions.defaults(), Enforcement.NONE))
        .doesNotThrowAnyException();
    assertThatCode(() -> ExecPolicy.validate(null, Enforcement.NONE)).doesNotThrowAnyException();
    assertThatCode(
            () ->
                ExecPolicy.validate(
                    options(new ResourceLimits(0, 0, 0, 1 << 20, 0), Duration.ofSeconds(1)),
                    Enforcement.NONE))
        .doesNotThrowAnyException();
    // The check cannot be vacuous: the same enforcement rejects a memory cap.
    assertUnavailable(options(limits(0, MIB, 0, 0), Duration.ZERO), Enforcement.NONE)
        .hasMessageStartingWith(NO_MEMORY);
  }

  @Test
  void diskIsRejectedEvenByAFullyEnforcingRunner() {
    Enforcement everything =
        Enforcement.builder().memoryCap(true).cpuCap(true).pidsCap(true).diskCap(true).build();

    assertUnavailable(options(limits(0, 0, 1, 0), Duration.ZERO), everything).hasMessage(DISK);
  }

  @Test
  void diskIsCheckedFirstEvenWhenCpuWithoutTimeoutAlsoApplies() {
    assertUnavailable(options(limits(500, MIB, 1, 1), Duration.ZERO), Enforcement.NONE)
        .hasMessage(DISK);
  }

  @Test
  void cpuWithoutTimeoutIsRejectedEvenWhenCpuIsEnforced() {
    assertUnavailable(options(limits(250, 0, 0, 0), Duration.ZERO), ALL_CAPS)
        .hasMessage(CPU_NEEDS_TIMEOUT);
  }

  @Test
  void cpuWithoutTimeoutIsCheckedBeforeTheEnforcementChecks() {
    assertUnavailable(options(limits(250, MIB, 0, 1), Duration.ZERO), Enforcement.NONE)
        .hasMessage(CPU_NEEDS_TIMEOUT);
  }

  static Stream<Arguments> unenforceableCaps() {
    Enforcement cpuPids = Enforcement.builder().cpuCap(true).pidsCap(true).build();
    Enforcement memPids = Enforcement.builder().memoryCap(true).pidsCap(true).build();
    Enforcement memCpu = Enforcement.builder().memoryCap(true).cpuCap(true).build();
    return Stream.of(
        Arguments.of("memory", limits(0, 1 << 20, 0, 0), cpuPids, NO_MEMORY),
        Arguments.of("cpu", limits(100, 0, 0, 0), memPids, NO_CPU),
        Arguments.of("pids", limits(0, 0, 0, 16), memCpu, NO_PIDS),
        Arguments.of("memory before cpu", limits(100, MIB, 0, 0), Enforcement.NONE, NO_MEMORY),
        Arguments.of("memory before pids", limits(0, MIB, 0, 1), Enforcement.NONE, NO_MEMORY),
        Arguments.of("cpu before pids", limits(100, 0, 0, 1), Enforcement.NONE, NO_CPU),
        Arguments.of("cpu when memory enforced", limits(100, MIB, 0, 1), memPids, NO_CPU),
        Arguments.of("pids when others enforced", limits(100, MIB, 0, 1), memCpu, NO_PIDS));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unenforceableCaps")
  void capIsNotAvailableOnlyWhenTheEnforcementLacksIt(
      String what, ResourceLimits limits, Enforcement enforcement, String message) {
    assertUnavailable(options(limits, Duration.ofSeconds(4)), enforcement)
        .hasMessageStartingWith(message)
        .hasMessageEndingWith("on this host");
  }

  static Stream<Arguments> enforceableCaps() {
    return Stream.of(
        Arguments.of(limits(0, 1 << 20, 0, 0), Enforcement.builder().memoryCap(true).build()),
        Arguments.of(limits(250, 0, 0, 0), Enforcement.builder().cpuCap(true).build()),
        Arguments.of(limits(0, 0, 0, 8), Enforcement.builder().pidsCap(true).build()),
        Arguments.of(limits(250, 1 << 20, 0, 8), ALL_CAPS));
  }

  @ParameterizedTest
  @MethodSource("enforceableCaps")
  void capPassesWhenTheEnforcementHoldsIt(ResourceLimits limits, Enforcement enforcement) {
    assertThatCode(() -> ExecPolicy.validate(options(limits, Duration.ofSeconds(4)), enforcement))
        .doesNotThrowAnyException();
    // Without the enforcement the same options are refused.
    assertUnavailable(options(limits, Duration.ofSeconds(4)), Enforcement.NONE)
        .hasMessageContaining("cannot enforce");
  }

  @Test
  void networkAndEnvAreNotCheckedHere() {
    ExecOptions o =
        ExecOptions.builder()
            .net(NetPolicy.denyAll())
            .env(EnvPolicy.none())
            .workDir("../escape")
            .build();

    assertThatCode(() -> ExecPolicy.validate(o, Enforcement.NONE)).doesNotThrowAnyException();
  }

  // ---- Enforcement ----

  @Test
  void ofNullIsNone() {
    assertThat(Enforcement.of(null)).isSameAs(Enforcement.NONE);
  }

  @Test
  void ofANonReportingRunnerIsNone() {
    Runner plain = (command, args, options) -> ExecResult.ofExit(0);

    assertThat(Enforcement.of(plain)).isSameAs(Enforcement.NONE);
  }

  @Test
  void ofAReportingRunnerIsItsOwnReport() {
    Enforcement report = Enforcement.builder().envAllowList(true).netModes(NetMode.PROXY).build();
    class Reporting implements Runner, EnforcementReporter {
      @Override
      public ExecResult exec(String command, List<String> args, ExecOptions options) {
        return ExecResult.ofExit(0);
      }

      @Override
      public Enforcement enforcement() {
        return report;
      }
    }

    assertThat(Enforcement.of(new Reporting())).isSameAs(report);
    assertThat(Enforcement.of(new NoopRunner())).isEqualTo(Enforcement.NONE);
  }

  @Test
  void noneEnforcesNothing() {
    Enforcement n = Enforcement.NONE;

    assertThat(n.envAllowList()).isFalse();
    assertThat(n.netModes()).isEmpty();
    assertThat(n.socks5()).isFalse();
    assertThat(n.mitm()).isFalse();
    assertThat(n.unixSocketPolicy()).isFalse();
    assertThat(n.memoryCap()).isFalse();
    assertThat(n.cpuCap()).isFalse();
    assertThat(n.diskCap()).isFalse();
    assertThat(n.filesystemBounds()).isFalse();
    assertThat(n.pidsCap()).isFalse();
    assertThat(Enforcement.builder().build()).isEqualTo(n);
  }

  @Test
  void defaultInNetModesIsRejected() {
    assertThatThrownBy(
            () -> Enforcement.builder().netModes(NetMode.DENY_ALL, NetMode.DEFAULT).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("DEFAULT");
  }

  @Test
  void duplicateNetModesAreRejected() {
    assertThatThrownBy(() -> Enforcement.builder().netModes(NetMode.PROXY, NetMode.PROXY).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("twice");
  }

  @Test
  void netModesAreCopiedInOrderAndNullIsEmpty() {
    NetMode[] modes = {NetMode.PROXY, NetMode.DENY_ALL};
    List<NetMode> list = Arrays.asList(modes);
    Enforcement e =
        new Enforcement(false, list, false, false, false, false, false, false, false, false);
    modes[0] = NetMode.ALLOW_LIST;

    assertThat(e.netModes()).containsExactly(NetMode.PROXY, NetMode.DENY_ALL);
    assertThatThrownBy(() -> e.netModes().add(NetMode.ALLOW_LIST))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(
            new Enforcement(false, null, false, false, false, false, false, false, false, false)
                .netModes())
        .isEmpty();
  }

  @ParameterizedTest
  @EnumSource(NetMode.class)
  void enforcesDefaultAlwaysAndOtherModesOnlyWhenListed(NetMode mode) {
    Enforcement onlyDenyAll = Enforcement.builder().netModes(NetMode.DENY_ALL).build();

    assertThat(Enforcement.NONE.enforces(mode)).isEqualTo(mode == NetMode.DEFAULT);
    assertThat(onlyDenyAll.enforces(mode))
        .isEqualTo(mode == NetMode.DEFAULT || mode == NetMode.DENY_ALL);
  }

  @Test
  void builderSetsEveryFlag() {
    Enforcement e =
        Enforcement.builder()
            .envAllowList(true)
            .netModes(NetMode.DENY_ALL, NetMode.ALLOW_LIST, NetMode.PROXY)
            .socks5(true)
            .mitm(true)
            .unixSocketPolicy(true)
            .memoryCap(true)
            .cpuCap(true)
            .diskCap(true)
            .filesystemBounds(true)
            .pidsCap(true)
            .build();

    assertThat(e)
        .isEqualTo(
            new Enforcement(
                true,
                List.of(NetMode.DENY_ALL, NetMode.ALLOW_LIST, NetMode.PROXY),
                true,
                true,
                true,
                true,
                true,
                true,
                true,
                true));
  }

  @Test
  void aCpuThrottleNeedsAThrottlingRunnerAndIsCheckedLast() {
    ExecOptions throttled =
        options(ResourceLimits.builder().cpuThrottleMillicores(250).build(), Duration.ZERO);
    assertUnavailable(throttled, ALL_CAPS)
        .hasMessageContaining("cannot throttle CPU")
        .hasMessageContaining("cpuThrottleMillicores");
    ExecPolicy.validate(throttled, Enforcement.builder().cpuThrottle(true).build());
    // The throttle is no budget: it needs no timeout.
    ExecOptions both =
        options(
            ResourceLimits.builder().cpuThrottleMillicores(250).maxProcesses(4).build(),
            Duration.ZERO);
    assertUnavailable(both, Enforcement.builder().cpuThrottle(true).build())
        .hasMessageStartingWith(NO_PIDS);
  }
}
