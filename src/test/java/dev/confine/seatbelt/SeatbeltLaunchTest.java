package dev.confine.seatbelt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.EnvPolicy;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SeatbeltLaunchTest {
  private static final List<String> HOST =
      List.of(
          "PATH=/usr/bin:/bin",
          "HOME=/Users/me",
          "HTTPS_PROXY=http://corp:3128",
          "no_proxy=*",
          "SSL_CERT_FILE=/etc/host.pem",
          "LANG=en_US.UTF-8");

  private static final String URL = "http://127.0.0.1:43123";

  private static Map<String, String> ordered(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  // ---- argv ----

  @Test
  void argvIsSandboxExecDashPTheProfileThenTheCommandAndItsArguments() {
    assertThat(
            SeatbeltLaunch.argv(
                "/usr/bin/sandbox-exec", "(version 1)\n", "git", List.of("status", "-s", "")))
        .containsExactly("/usr/bin/sandbox-exec", "-p", "(version 1)\n", "git", "status", "-s", "");
  }

  @Test
  void argvWithoutArguments() {
    assertThat(SeatbeltLaunch.argv("sandbox-exec", "P", "/bin/true", null))
        .containsExactly("sandbox-exec", "-p", "P", "/bin/true");
    assertThat(SeatbeltLaunch.argv("sandbox-exec", "P", "./-x", List.of()))
        .containsExactly("sandbox-exec", "-p", "P", "./-x");
  }

  @Test
  void anEmptyCommandIsAValidationError() {
    for (String command : new String[] {"", null}) {
      assertThatThrownBy(() -> SeatbeltLaunch.argv("sandbox-exec", "P", command, List.of()))
          .isInstanceOfSatisfying(
              SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION))
          .hasMessage("sandbox: seatbelt: empty command");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"-f", "-p", "-D", "-", "--"})
  void aCommandSandboxExecWouldTakeForAnOptionIsRefused(String command) {
    assertThatThrownBy(() -> SeatbeltLaunch.argv("sandbox-exec", "P", command, List.of()))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION))
        .hasMessageContaining("would read as an option")
        .hasMessageContaining("./" + command);
  }

  // ---- environment, §3.3 then the proxy ----

  @Test
  void withoutAProxyTheEnvironmentIsThePolicyApplied() {
    EnvPolicy policy = EnvPolicy.allow("PATH", "HTTPS_PROXY").withInject(ordered("A", "1"));
    assertThat(SeatbeltLaunch.environment(policy, HOST, 0, null))
        .containsExactly("PATH=/usr/bin:/bin", "HTTPS_PROXY=http://corp:3128", "A=1")
        .isEqualTo(policy.apply(HOST));
    assertThat(SeatbeltLaunch.environment(EnvPolicy.inheritAll(), HOST, 0, null))
        .containsExactlyElementsOf(HOST);
    assertThat(SeatbeltLaunch.environment(EnvPolicy.none(), HOST, 0, null)).isEmpty();
  }

  @Test
  void proxiedModesForceTheSixProxyVariablesAndEmptyTheNoProxyOnes() {
    assertThat(SeatbeltLaunch.environment(EnvPolicy.inheritAll(), HOST, 43123, null))
        .containsExactly(
            "PATH=/usr/bin:/bin",
            "HOME=/Users/me",
            "SSL_CERT_FILE=/etc/host.pem",
            "LANG=en_US.UTF-8",
            "HTTP_PROXY=" + URL,
            "http_proxy=" + URL,
            "HTTPS_PROXY=" + URL,
            "https_proxy=" + URL,
            "ALL_PROXY=" + URL,
            "all_proxy=" + URL,
            "NO_PROXY=",
            "no_proxy=");
  }

  @Test
  void theProxyVariablesWinOverInjectedOnesAndReachAnEmptyEnvironmentToo() {
    EnvPolicy policy =
        EnvPolicy.none()
            .withInject(ordered("http_proxy", "http://evil:1", "NO_PROXY", "*", "X", "y"));
    assertThat(SeatbeltLaunch.environment(policy, HOST, 8080, null))
        .containsExactly(
            "X=y",
            "HTTP_PROXY=http://127.0.0.1:8080",
            "http_proxy=http://127.0.0.1:8080",
            "HTTPS_PROXY=http://127.0.0.1:8080",
            "https_proxy=http://127.0.0.1:8080",
            "ALL_PROXY=http://127.0.0.1:8080",
            "all_proxy=http://127.0.0.1:8080",
            "NO_PROXY=",
            "no_proxy=");
  }

  @Test
  void theAllowListStillFiltersTheHostBeforeTheProxyIsForced() {
    assertThat(SeatbeltLaunch.environment(EnvPolicy.allow("HOME"), HOST, 1, null))
        .hasSize(1 + 8)
        .startsWith("HOME=/Users/me")
        .doesNotContain("PATH=/usr/bin:/bin", "HTTPS_PROXY=http://corp:3128", "no_proxy=*");
  }

  @Test
  void aCaBundleIsTheChildsSslCertFileWhateverTheHostSays() {
    assertThat(SeatbeltLaunch.environment(EnvPolicy.allow("SSL_CERT_FILE"), HOST, 0, "/t/ca.pem"))
        .containsExactly("SSL_CERT_FILE=/t/ca.pem");
    assertThat(SeatbeltLaunch.environment(EnvPolicy.none(), HOST, 9, "/t/ca.pem"))
        .endsWith("no_proxy=", "SSL_CERT_FILE=/t/ca.pem")
        .hasSize(9);
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, 65536})
  void aPortOutOfRangeIsACallersBug(int port) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> SeatbeltLaunch.environment(EnvPolicy.none(), HOST, port, null))
        .withMessageContaining("out of range");
  }

  @Test
  void theForcedNamesAreTheSeeds() {
    assertThat(SeatbeltLaunch.PROXY_VARIABLES)
        .containsExactly(
            "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy");
    assertThat(SeatbeltLaunch.NO_PROXY_VARIABLES).containsExactly("NO_PROXY", "no_proxy");
  }
}
