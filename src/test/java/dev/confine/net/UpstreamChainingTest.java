package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.UpstreamHttpProxy;
import dev.confine.testing.UpstreamHttpsProxy;
import dev.confine.testing.UpstreamSocksProxy;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Chaining to real upstream proxies started on 127.0.0.1: tinyproxy (HTTP, Basic credentials) and
 * dante (SOCKS5, RFC 1929 credentials). Plain HTTP and CONNECT tunnels both go through the
 * upstream; what the rules deny never reaches it; an upstream that refuses is a 502.
 */
class UpstreamChainingTest {

  @BeforeEach
  void needCurl() {
    HostRequirements.requireProgram("curl");
  }

  /** PROXY mode through {@code upstream}; loopback destinations need their IP rule. */
  private static EgressProxy through(String upstream, int originPort) {
    return builder(upstream, originPort).start();
  }

  private static EgressProxy.Builder builder(String upstream, int originPort) {
    return EgressProxy.builder(
            NetPolicy.proxy(
                upstream, NetRule.allow("127.0.0.1", originPort), NetRule.deny("denied.test")))
        .listenOnLoopback()
        .resolver(EgressProxyTest.RESOLVER);
  }

  /** Plain HTTP and a CONNECT tunnel through {@code proxy} reach the origin past tinyproxy. */
  private static void plainAndTunnelPassTinyproxy(EgressProxy proxy, Origin origin, String target)
      throws Exception {
    var plain =
        Clients.curl("--proxy", proxy.httpUrl().orElseThrow(), "http://" + target + "/hello");
    assertThat(plain.err()).isEmpty();
    assertThat(plain.out()).isEqualTo("hello");
    assertThat(origin.seen().get(0).headers().getFirst("Via")).contains(UpstreamHttpProxy.VIA_NAME);
    // Neither the client's token nor the upstream's credentials reach the origin.
    assertThat(origin.seen().get(0).headers().containsKey("Proxy-authorization")).isFalse();
    var tunnel =
        Clients.curl(
            "--proxytunnel",
            "--proxy",
            proxy.httpUrl().orElseThrow(),
            "--data-binary",
            "ping",
            "http://" + target + "/echo");
    assertThat(tunnel.err()).isEmpty();
    assertThat(tunnel.out()).isEqualTo("ping");
  }

  @Test
  void plainHttpAndTunnelsGoThroughAnHttpUpstreamWithCredentials() throws Exception {
    try (Origin origin = new Origin();
        UpstreamHttpProxy upstream = UpstreamHttpProxy.startWithBasicAuth("agent", "s3cret");
        EgressProxy proxy = through(upstream.url(), origin.port())) {
      String target = "127.0.0.1:" + origin.port();
      plainAndTunnelPassTinyproxy(proxy, origin, target);
      assertThat(upstream.requests())
          .contains("GET http://" + target + "/hello HTTP/1.1", "CONNECT " + target + " HTTP/1.1");
      var denied =
          Clients.curl("-i", "--proxy", proxy.httpUrl().orElseThrow(), "http://denied.test/");
      assertThat(denied.out()).startsWith("HTTP/1.1 403").contains("policy mode proxy");
      assertThat(upstream.requests()).noneMatch(r -> r.contains("denied.test"));
    }
  }

  @Test
  void anUpstreamThatRefusesTheCredentialsIsA502() throws Exception {
    try (Origin origin = new Origin();
        UpstreamHttpProxy upstream = UpstreamHttpProxy.startWithBasicAuth("agent", "s3cret");
        EgressProxy proxy = through(upstream.url().replace("s3cret", "wrong"), origin.port())) {
      String auth = Clients.proxyAuthorization(proxy.token().orElseThrow());
      String answer =
          Clients.exchange(
              proxy.address().orElseThrow(),
              "CONNECT 127.0.0.1:" + origin.port() + " HTTP/1.1\r\n" + auth + "\r\n");
      assertThat(answer)
          .startsWith("HTTP/1.1 502")
          .contains("cannot connect to 127.0.0.1:" + origin.port());
      assertThat(origin.seen()).isEmpty();
    }
  }

  @Test
  void plainHttpAndTunnelsGoThroughASocksUpstreamWithAPassword() throws Exception {
    HostRequirements.requireRoot();
    try (Origin origin = new Origin();
        UpstreamSocksProxy upstream =
            UpstreamSocksProxy.startWithPassword(UpstreamSocksProxy.TEST_USER, "s0cks-pass");
        EgressProxy proxy = through(upstream.url(), origin.port())) {
      String target = "127.0.0.1:" + origin.port();
      var plain =
          Clients.curl("--proxy", proxy.httpUrl().orElseThrow(), "http://" + target + "/hello");
      assertThat(plain.err()).isEmpty();
      assertThat(plain.out()).isEqualTo("hello");
      var socks =
          Clients.curl("--proxy", proxy.socksUrl().orElseThrow(), "http://" + target + "/hello");
      assertThat(socks.out()).isEqualTo("hello");
      // dante logs a connection as it ends: wait for both.
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (upstream.connects().size() < 2 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(upstream.connects())
          .hasSize(2)
          .allSatisfy(
              c -> {
                assertThat(c.user()).isEqualTo(UpstreamSocksProxy.TEST_USER);
                assertThat(c.target()).isEqualTo(target);
              });
    }
  }

  @Test
  void plainHttpAndTunnelsGoOverTlsToAnHttpsUpstream() throws Exception {
    try (Origin origin = new Origin();
        UpstreamHttpsProxy upstream =
            UpstreamHttpsProxy.startWithBasicAuth("127.0.0.1", "agent", "s3cret");
        EgressProxy proxy =
            builder(upstream.url("127.0.0.1"), origin.port())
                .outboundRoots(List.of(upstream.ca()))
                .start()) {
      String target = "127.0.0.1:" + origin.port();
      plainAndTunnelPassTinyproxy(proxy, origin, target);
      var socks =
          Clients.curl("--proxy", proxy.socksUrl().orElseThrow(), "http://" + target + "/hello");
      assertThat(socks.out()).isEqualTo("hello");
      assertThat(upstream.http().requests())
          .contains("GET http://" + target + "/hello HTTP/1.1", "CONNECT " + target + " HTTP/1.1");
      // Each reached tinyproxy through stunnel: over TLS, not to tinyproxy's plain port.
      assertThat(upstream.tlsConnections()).isEqualTo(3);
      var denied =
          Clients.curl("-i", "--proxy", proxy.httpUrl().orElseThrow(), "http://denied.test/");
      assertThat(denied.out()).startsWith("HTTP/1.1 403");
      assertThat(upstream.tlsConnections()).isEqualTo(3);
    }
  }

  /**
   * An upstream whose certificate the proxy does not trust, or which names another host, is a 502
   * saying TLS to the upstream failed; nothing is sent to it.
   */
  @Test
  void anHttpsUpstreamIsTrustedOnlyWithAValidCertificateForItsName() throws Exception {
    try (Origin origin = new Origin();
        UpstreamHttpsProxy upstream =
            UpstreamHttpsProxy.startWithBasicAuth("127.0.0.1", "agent", "s3cret");
        EgressProxy untrusted = through(upstream.url("127.0.0.1"), origin.port());
        EgressProxy misnamed =
            builder(upstream.url("localhost"), origin.port())
                .outboundRoots(List.of(upstream.ca()))
                .start()) {
      String target = "127.0.0.1:" + origin.port();
      for (EgressProxy proxy : List.of(untrusted, misnamed)) {
        String auth = Clients.proxyAuthorization(proxy.token().orElseThrow());
        String tunnel =
            Clients.exchange(
                proxy.address().orElseThrow(),
                "CONNECT " + target + " HTTP/1.1\r\n" + auth + "\r\n");
        assertThat(tunnel)
            .startsWith("HTTP/1.1 502")
            .contains("cannot connect to " + target)
            .contains("TLS to the upstream proxy https://agent:***@");
        String plain =
            Clients.exchange(
                proxy.address().orElseThrow(),
                "GET http://"
                    + target
                    + "/hello HTTP/1.1\r\nHost: "
                    + target
                    + "\r\n"
                    + auth
                    + "\r\n");
        assertThat(plain).startsWith("HTTP/1.1 502").contains("TLS to the upstream proxy");
      }
      assertThat(upstream.http().requests()).isEmpty();
      assertThat(origin.seen()).isEmpty();
    }
  }
}
