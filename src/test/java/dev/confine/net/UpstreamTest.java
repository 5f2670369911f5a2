package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.SandboxException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UpstreamTest {

  @ParameterizedTest
  @CsvSource({
    "http://proxy, HTTP, proxy, 80, http://proxy:80",
    "HTTPS://proxy, HTTPS, proxy, 443, https://proxy:443",
    "https://u:p@proxy:8443, HTTPS, proxy, 8443, https://u:***@proxy:8443",
    "socks5://[::1], SOCKS5, ::1, 1080, socks5://::1:1080",
    "socks5h://proxy:9050, SOCKS5, proxy, 9050, socks5://proxy:9050",
  })
  void parsesEachSchemeWithItsDefaultPort(
      String url, Upstream.Scheme scheme, String host, int port, String shown) {
    Upstream u = Upstream.parse(url);

    assertThat(u.scheme()).isEqualTo(scheme);
    assertThat(u.host()).isEqualTo(host);
    assertThat(u.port()).isEqualTo(port);
    assertThat(u.tls()).isEqualTo(scheme == Upstream.Scheme.HTTPS);
    assertThat(u.socks()).isEqualTo(scheme == Upstream.Scheme.SOCKS5);
    assertThat(u).hasToString(shown);
  }

  @ParameterizedTest
  @CsvSource({
    "ftp://proxy, 'scheme \"ftp\" is not http, https or socks5'",
    "http://:8080, no host"
  })
  void refusesWhatItCannotUse(String url, String why) {
    assertThatThrownBy(() -> Upstream.parse(url))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining(why);
  }
}
