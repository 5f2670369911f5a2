package dev.confine.bwrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The seed's flag assembly (§10.1 step 1, §10.2) as exact argument lists. */
class BwrapFlagsTest {

  /** The seed's rejected set, written out again so that a change to the constant shows here. */
  static final List<String> SEED_REJECTED =
      List.of(
          "--ro-bind",
          "--ro-bind-try",
          "--bind",
          "--bind-try",
          "--dev-bind",
          "--dev-bind-try",
          "--bind-fd",
          "--ro-bind-fd",
          "--remount-ro",
          "--overlay-src",
          "--overlay",
          "--tmp-overlay",
          "--ro-overlay",
          "--proc",
          "--dev",
          "--tmpfs",
          "--mqueue",
          "--dir",
          "--file",
          "--bind-data",
          "--ro-bind-data",
          "--symlink",
          "--chmod",
          "--perms",
          "--clearenv",
          "--setenv",
          "--unsetenv",
          "--unshare-all",
          "--share-net",
          "--unshare-user",
          "--unshare-user-try",
          "--unshare-ipc",
          "--unshare-pid",
          "--unshare-net",
          "--unshare-uts",
          "--unshare-cgroup",
          "--unshare-cgroup-try",
          "--disable-userns",
          "--assert-userns-disabled",
          "--userns",
          "--userns2",
          "--pidns",
          "--chdir",
          "--uid",
          "--gid",
          "--hostname",
          "--seccomp",
          "--add-seccomp-fd",
          "--cap-add",
          "--cap-drop",
          "--new-session",
          "--args");

  private static final Map<String, String> NO_HOST_ENV = Map.of();

  private static Map<String, String> ordered(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  private static ExecOptions withEnv(EnvPolicy env) {
    return ExecOptions.builder().env(env).build();
  }

  private static ExecOptions withMode(NetMode mode) {
    return ExecOptions.builder()
        .env(EnvPolicy.none())
        .net(NetPolicy.builder().mode(mode).build())
        .build();
  }

  private static String rejection(String flag) {
    return "sandbox: bwrap: extra flag "
        + flag
        + " can weaken sandbox enforcement; policy flags are owned by ExecOptions";
  }

  // ---- extra flags (§10.1 step 1) ----

  @Test
  void theRejectedSetIsExactlyTheSeeds() {
    assertThat(BwrapFlags.REJECTED_EXTRA_FLAGS).containsExactlyElementsOf(SEED_REJECTED);
    assertThat(SEED_REJECTED).hasSize(52).doesNotHaveDuplicates();
  }

  static Stream<String> rejected() {
    return SEED_REJECTED.stream();
  }

  @ParameterizedTest
  @MethodSource("rejected")
  void everyRejectedFlagIsRefusedWithTheSeedsMessage(String flag) {
    assertThat(BwrapFlags.rejectedExtraFlag(List.of(flag))).contains(flag);
    assertThatThrownBy(() -> BwrapFlags.validateExtraFlags(List.of("--die-with-parent", flag)))
        .isInstanceOfSatisfying(
            SandboxException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(Kind.VALIDATION);
              assertThat(e.getMessage()).isEqualTo(rejection("\"" + flag + "\""));
            });
  }

  @ParameterizedTest
  @MethodSource("rejected")
  void aRejectedFlagWithAValueIsRefusedWholeAsGiven(String flag) {
    String raw = flag + "=/some/value";
    assertThat(BwrapFlags.rejectedExtraFlag(List.of(raw))).contains(raw);
    assertThatThrownBy(() -> BwrapFlags.validateExtraFlags(List.of(raw)))
        .hasMessage(rejection("\"" + raw + "\""));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "--die-with-parent",
        "--level-prefix",
        "--argv0",
        "--info-fd",
        "--json-status-fd",
        "--lock-file",
        "--sync-fd",
        "--block-fd",
        "--argv0=--bind",
        "--lock-file=/tmp/lock",
        "--info-fd=3",
        "/tmp",
        "",
        "--BIND",
        "--bind-fdx",
        "-bind",
        "--bind ",
        " --bind"
      })
  void anythingElseIsAllowedAndValuesAreNotJudged(String flag) {
    assertThat(BwrapFlags.rejectedExtraFlag(List.of(flag))).isEmpty();
    assertThatCode(() -> BwrapFlags.validateExtraFlags(List.of(flag))).doesNotThrowAnyException();
  }

  @Test
  void theSeedsAllowedFlagsPassTogetherAndNoFlagsPass() {
    List<String> allowed =
        List.of(
            "--die-with-parent",
            "--level-prefix",
            "--argv0",
            "x",
            "--info-fd",
            "3",
            "--json-status-fd",
            "4",
            "--lock-file",
            "/tmp/l",
            "--sync-fd",
            "5",
            "--block-fd",
            "6");
    assertThat(BwrapFlags.rejectedExtraFlag(allowed)).isEmpty();
    assertThat(BwrapFlags.rejectedExtraFlag(List.of())).isEmpty();
  }

  @Test
  void theFirstRejectedFlagIsTheOneNamed() {
    assertThat(BwrapFlags.rejectedExtraFlag(List.of("--level-prefix", "--tmpfs=/x", "--bind")))
        .contains("--tmpfs=/x");
  }

  @Test
  void onlyTheFlagTokenIsChecked() {
    // A value given as the next token is a token like any other: it passes unless it spells a
    // rejected flag, which is then refused (the seed's rule: tokens, not their meaning).
    assertThat(BwrapFlags.rejectedExtraFlag(List.of("--argv0", "--bind"))).contains("--bind");
    assertThat(BwrapFlags.rejectedExtraFlag(List.of("--argv0", "bind"))).isEmpty();
  }

  @Test
  void theRejectedFlagIsQuotedAsGoQuotesIt() {
    assertThatThrownBy(() -> BwrapFlags.validateExtraFlags(List.of("--bind=\"a\"\\b")))
        .hasMessage(rejection("\"--bind=\\\"a\\\"\\\\b\""));
    assertThatThrownBy(() -> BwrapFlags.validateExtraFlags(List.of("--tmpfs=\n\t\u0001\u007f")))
        .hasMessage(rejection("\"--tmpfs=\\n\\t\\x01\\x7f\""));
    assertThatThrownBy(() -> BwrapFlags.validateExtraFlags(List.of("--proc=\u00a0\u200b")))
        .hasMessage(rejection("\"--proc=\\u00a0\\u200b\""));
  }

  // ---- buildFlags (§10.2) ----

  @Test
  void theDefaultsGiveTheAlwaysFlagsNoChdirAndTheHostNetwork() {
    assertThat(BwrapFlags.buildFlags(withEnv(EnvPolicy.none()), NO_HOST_ENV))
        .containsExactly("--die-with-parent", "--unshare-pid", "--clearenv", "--share-net");
  }

  @Test
  void aWorkDirGivesChdirAfterTheAlwaysFlags() {
    ExecOptions opts =
        ExecOptions.builder().workDir("/work/root/sub").env(EnvPolicy.none()).build();
    assertThat(BwrapFlags.buildFlags(opts, NO_HOST_ENV))
        .containsExactly(
            "--die-with-parent",
            "--unshare-pid",
            "--chdir",
            "/work/root/sub",
            "--clearenv",
            "--share-net");
  }

  @Test
  void anEmptyWorkDirGivesNoChdir() {
    ExecOptions opts = ExecOptions.builder().workDir("").env(EnvPolicy.none()).build();
    assertThat(BwrapFlags.buildFlags(opts, NO_HOST_ENV)).doesNotContain("--chdir");
  }

  @Test
  void aNullAllowListPassesEveryHostVariableSortedByName() {
    Map<String, String> host = ordered("PATH", "/usr/bin", "HOME", "/home/u", "EMPTY", "");
    assertThat(BwrapFlags.buildFlags(withEnv(EnvPolicy.inheritAll()), host))
        .containsExactly(
            "--die-with-parent",
            "--unshare-pid",
            "--clearenv",
            "--setenv",
            "EMPTY",
            "",
            "--setenv",
            "HOME",
            "/home/u",
            "--setenv",
            "PATH",
            "/usr/bin",
            "--share-net");
  }

  @Test
  void aNonEmptyAllowListPassesOnlyTheNamedHostVariablesThatExist() {
    Map<String, String> host = ordered("PATH", "/usr/bin", "HOME", "/home/u", "Lang", "x");
    assertThat(BwrapFlags.envFlags(EnvPolicy.allow("PATH", "LANG", "MISSING", "Lang"), host))
        .containsExactly("--clearenv", "--setenv", "Lang", "x", "--setenv", "PATH", "/usr/bin");
  }

  @Test
  void anEmptyAllowListWithoutInjectGivesExactlyClearenv() {
    Map<String, String> host = ordered("PATH", "/usr/bin", "HOME", "/home/u");
    assertThat(BwrapFlags.envFlags(EnvPolicy.none(), host)).containsExactly("--clearenv");
    assertThat(BwrapFlags.envFlags(new EnvPolicy(List.of(), null), host))
        .containsExactly("--clearenv");
  }

  @Test
  void anEmptyAllowListPassesOnlyTheInjectedVariables() {
    Map<String, String> host = ordered("PATH", "/usr/bin");
    EnvPolicy env = EnvPolicy.none().withInject(ordered("B", "2", "A", "1"));
    assertThat(BwrapFlags.envFlags(env, host))
        .containsExactly("--clearenv", "--setenv", "A", "1", "--setenv", "B", "2");
  }

  @Test
  void injectedVariablesReplaceHostValuesAndAddNewNames() {
    Map<String, String> host = ordered("PATH", "/usr/bin", "HOME", "/home/u", "TERM", "xterm");
    EnvPolicy env =
        EnvPolicy.allow("PATH", "HOME").withInject(ordered("HOME", "/sandbox", "NEW", "n"));
    assertThat(BwrapFlags.envFlags(env, host))
        .containsExactly(
            "--clearenv",
            "--setenv",
            "HOME",
            "/sandbox",
            "--setenv",
            "NEW",
            "n",
            "--setenv",
            "PATH",
            "/usr/bin");
    assertThat(
            BwrapFlags.envFlags(EnvPolicy.inheritAll().withInject(ordered("TERM", "dumb")), host))
        .containsExactly(
            "--clearenv",
            "--setenv",
            "HOME",
            "/home/u",
            "--setenv",
            "PATH",
            "/usr/bin",
            "--setenv",
            "TERM",
            "dumb");
  }

  @Test
  void aValueIsSplitAtTheFirstEqualsSignAndKeptWhole() {
    Map<String, String> host = ordered("A", "=b=c", "N", "line1\nline2", "S", " spaced ");
    assertThat(BwrapFlags.envFlags(EnvPolicy.inheritAll(), host))
        .containsExactly(
            "--clearenv",
            "--setenv",
            "A",
            "=b=c",
            "--setenv",
            "N",
            "line1\nline2",
            "--setenv",
            "S",
            " spaced ");
  }

  @Test
  void aHostEntryWithAnEmptyNameIsLeftOut() {
    Map<String, String> host = ordered("", "nameless", "A", "1");
    assertThat(BwrapFlags.envFlags(EnvPolicy.inheritAll(), host))
        .containsExactly("--clearenv", "--setenv", "A", "1");
  }

  @Test
  void theOrderDoesNotDependOnTheHostsOrder() {
    Map<String, String> one = ordered("Z", "z", "A", "a", "M", "m");
    Map<String, String> two = ordered("M", "m", "Z", "z", "A", "a");
    assertThat(BwrapFlags.envFlags(EnvPolicy.inheritAll(), one))
        .isEqualTo(BwrapFlags.envFlags(EnvPolicy.inheritAll(), two))
        .containsSubsequence("A", "M", "Z");
  }

  @Test
  void theDefaultNetModeSharesTheHostNetwork() {
    assertThat(BwrapFlags.netFlags(NetMode.DEFAULT)).containsExactly("--share-net");
    assertThat(BwrapFlags.buildFlags(withMode(NetMode.DEFAULT), NO_HOST_ENV))
        .endsWith("--share-net")
        .doesNotContain("--unshare-net");
  }

  @ParameterizedTest
  @EnumSource(
      value = NetMode.class,
      names = {"DENY_ALL", "ALLOW_LIST", "PROXY"})
  void theIsolatedModesUnshareTheNetwork(NetMode mode) {
    assertThat(BwrapFlags.netFlags(mode)).containsExactly("--unshare-net");
    assertThat(BwrapFlags.buildFlags(withMode(mode), NO_HOST_ENV))
        .containsExactly("--die-with-parent", "--unshare-pid", "--clearenv", "--unshare-net");
  }

  @Test
  void everyCombinationInOneCall() {
    ExecOptions opts =
        ExecOptions.builder()
            .workDir("/r/w")
            .env(EnvPolicy.allow("HOME").withInject(ordered("X", "1")))
            .net(NetPolicy.builder().mode(NetMode.DENY_ALL).build())
            .build();
    assertThat(BwrapFlags.buildFlags(opts, ordered("HOME", "/h", "PATH", "/p")))
        .containsExactly(
            "--die-with-parent",
            "--unshare-pid",
            "--chdir",
            "/r/w",
            "--clearenv",
            "--setenv",
            "HOME",
            "/h",
            "--setenv",
            "X",
            "1",
            "--unshare-net");
  }

  // ---- filesystemFlags, netIsolationFlags (§10.2) ----

  @Test
  void theFilesystemFlagsForARootAlone() {
    assertThat(BwrapFlags.filesystemFlags("/work/root", List.of()))
        .containsExactly(
            "--ro-bind",
            "/",
            "/",
            "--tmpfs",
            "/tmp",
            "--bind",
            "/work/root",
            "/work/root",
            "--proc",
            "/proc",
            "--dev",
            "/dev");
  }

  @Test
  void writablePathsAreBoundAfterTheRootInOrderSkippingEmptyAndTheRoot() {
    List<String> writable = new ArrayList<>(List.of("/cache", "", "/work/root", "/tmp/out"));
    assertThat(BwrapFlags.filesystemFlags("/work/root", writable))
        .containsExactly(
            "--ro-bind",
            "/",
            "/",
            "--tmpfs",
            "/tmp",
            "--bind",
            "/work/root",
            "/work/root",
            "--bind",
            "/cache",
            "/cache",
            "--bind",
            "/tmp/out",
            "/tmp/out",
            "--proc",
            "/proc",
            "--dev",
            "/dev");
  }

  @Test
  void aRootUnderTmpIsBoundAfterTheTmpfs() {
    List<String> flags = BwrapFlags.filesystemFlags("/tmp/ws", List.of());
    assertThat(flags.indexOf("/tmp/ws")).isGreaterThan(flags.lastIndexOf("/tmp"));
    assertThat(flags.indexOf("--proc")).isGreaterThan(flags.indexOf("/tmp/ws"));
  }

  @Test
  void theDefaultModeKeepsTheHostsRun() {
    assertThat(BwrapFlags.netIsolationFlags(NetMode.DEFAULT)).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(
      value = NetMode.class,
      names = {"DENY_ALL", "ALLOW_LIST", "PROXY"})
  void theIsolatedModesGetAPrivateRun(NetMode mode) {
    assertThat(BwrapFlags.netIsolationFlags(mode)).containsExactly("--tmpfs", "/run");
  }

  // ---- beyond the seed ----

  @Test
  void theHardeningFlagsAreANewSessionAndNoCapabilities() {
    assertThat(BwrapFlags.hardeningFlags()).containsExactly("--new-session", "--cap-drop", "ALL");
  }

  @Test
  void noExtraFlagCanUndoTheHardeningOrThePolicyFlags() {
    List<String> ours = new ArrayList<>(BwrapFlags.hardeningFlags());
    ours.addAll(BwrapFlags.buildFlags(withMode(NetMode.DENY_ALL), NO_HOST_ENV));
    ours.addAll(BwrapFlags.filesystemFlags("/r", List.of("/w")));
    ours.addAll(BwrapFlags.netIsolationFlags(NetMode.DENY_ALL));
    for (String token : ours) {
      if (token.startsWith("--") && !token.equals("--die-with-parent")) {
        assertThat(BwrapFlags.REJECTED_EXTRA_FLAGS).as(token).contains(token);
      }
    }
  }

  @Test
  void theCommandLineIsExtraThenPolicyThenFilesystemThenTheCommand() {
    assertThat(
            BwrapFlags.commandLine(
                List.of("--level-prefix"),
                List.of("--die-with-parent", "--unshare-pid"),
                List.of("--ro-bind", "/", "/"),
                List.of("sh", "-c", "--bind")))
        .containsExactly(
            "--level-prefix",
            "--die-with-parent",
            "--unshare-pid",
            "--ro-bind",
            "/",
            "/",
            "--",
            "sh",
            "-c",
            "--bind");
  }
}
