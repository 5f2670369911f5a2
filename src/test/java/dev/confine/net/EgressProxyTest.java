package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.NetAction;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The egress proxy end to end, with curl as the client and a local origin: forwarding, CONNECT,
 * SOCKS5, refusals an agent can read, the token, what never leaves the proxy, keep-alive,
 * streaming, audit and hooks, on both transports.
 */
class EgressProxyTest {
  /** Test names: origin.test is the local origin; public.test is public and never reached. */
  static final HostResolver RESOLVER =
      host ->
          switch (host) {
            case "origin.test", "also-origin.test" ->
                List.of(InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1}));
            case "public.test" ->
                List.of(
                    InetAddress.getByAddress(host, new byte[] {93, (byte) 184, (byte) 216, 34}));
            case "elsewhere.test" ->
                List.of(InetAddress.getByAddress(host, new byte[] {127, 0, 0, 2}));
            default -> throw new UnknownHostException(host);
          };

  private Origin origin;
  private final BlockingQueue<ProxyDecision> decisions = new LinkedBlockingQueue<>();
  private final BlockingQueue<ProxyConnection> closed = new LinkedBlockingQueue<>();

  @BeforeEach
  void setUp() throws IOException {
    HostRequirements.requireProgram("curl");
    origin = new Origin();
  }

  @AfterEach
  void tearDown() {
    origin.close();
  }

  /** Allows origin.test by name and, as it is loopback, 127.0.0.1 on the origin's port by IP. */
  private NetPolicy allowOrigin(NetRule... more) {
    NetRule[] rules = new NetRule[more.length + 2];
    rules[0] = NetRule.allow("origin.test");
    rules[1] = NetRule.allow("127.0.0.1", origin.port());
    System.arraycopy(more, 0, rules, 2, more.length);
    return NetPolicy.allowList(rules);
  }

  private EgressProxy start(NetPolicy policy, Transport transport) {
    EgressProxy proxy = started(policy, transport);
    assertThat(proxy.transport()).isEqualTo(transport);
    return proxy;
  }

  private EgressProxy started(NetPolicy policy, Transport transport) {
    return EgressProxy.builder(policy)
        .listenOnLoopback()
        .resolver(RESOLVER)
        .transport(transport)
        .audit(
            new ProxyAuditListener() {
              @Override
              public void decided(ProxyDecision d) {
                decisions.add(d);
              }

              @Override
              public void closed(ProxyConnection c) {
                closed.add(c);
              }
            })
        .start();
  }

  private String url(String host, String path) {
    return "http://" + host + ":" + origin.port() + path;
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void plainHttpIsForwardedToTheCheckedAddress(Transport transport) throws Exception {
    requireTransport(transport);
    try (EgressProxy proxy = start(allowOrigin(), transport)) {
      var r =
          Clients.curl("--proxy", proxy.httpUrl().orElseThrow(), url("origin.test", "/hello?x=1"));
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).isEqualTo("hello");
      assertThat(origin.seen())
          .singleElement()
          .satisfies(
              s -> {
                assertThat(s.uri()).isEqualTo("/hello?x=1");
                assertThat(s.headers().getFirst("Host")).isEqualTo("origin.test:" + origin.port());
              });
      ProxyDecision d = decisions.poll(5, TimeUnit.SECONDS);
      assertThat(d).isNotNull();
      assertThat(d.protocol()).isEqualTo(ProxyProtocol.HTTP);
      assertThat(d.host()).isEqualTo("origin.test");
      assertThat(d.port()).isEqualTo(origin.port());
      assertThat(d.action()).isEqualTo(NetAction.ALLOW);
      assertThat(d.rule()).isEqualTo("allow origin.test");
      assertThat(d.address()).isEqualTo("127.0.0.1");
      assertThat(d.mode()).isEqualTo(NetMode.ALLOW_LIST);
    }
  }

  /**
   * With admitOnly the proxy serves the connections from admitted ports, each once, without a token
   * (also one admitted just after it was accepted), and closes every other without a byte once it
   * has waited for an admission in vain.
   */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void admitOnlyServesAdmittedPortsOnly(Transport transport) throws Exception {
    requireTransport(transport);
    PeerAdmissions admissions = new PeerAdmissions();
    try (EgressProxy proxy =
        EgressProxy.builder(allowOrigin())
            .listenOnLoopback()
            .resolver(RESOLVER)
            .transport(transport)
            .admitOnly(admissions)
            .start()) {
      assertThat(proxy.token()).isEmpty();
      assertThat(proxy.httpUrl().orElseThrow()).doesNotContain("@");
      InetSocketAddress at = proxy.address().orElseThrow();
      String request =
          "GET "
              + url("origin.test", "/admitted")
              + " HTTP/1.1\r\nHost: origin.test\r\n"
              + "Connection: close\r\n\r\n";
      try (Socket admitted = new Socket()) {
        admitted.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        admissions.admit(admitted.getLocalPort());
        admitted.connect(at);
        admitted.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
        String answer =
            new String(admitted.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        assertThat(answer).startsWith("HTTP/1.1 200").endsWith("hello");
      }
      assertThat(admissions.pending()).as("taken once").isZero();
      try (Socket stranger = new Socket()) {
        stranger.connect(at);
        stranger.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
        stranger.setSoTimeout(5000);
        assertThat(stranger.getInputStream().read()).isEqualTo(-1);
      } catch (java.net.SocketException reset) {
        // closed before the request was written: as good
      }
      assertThat(origin.seen()).hasSize(1);
      // A connection accepted before its admission waits for it.
      try (Socket early = new Socket()) {
        early.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        early.connect(at);
        early.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
        Thread.sleep(200);
        admissions.admit(early.getLocalPort());
        String answer =
            new String(early.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        assertThat(answer).startsWith("HTTP/1.1 200").endsWith("hello");
      }
      assertThat(origin.seen()).hasSize(2);
    }
    assertThatThrownBy(
            () -> EgressProxy.builder(allowOrigin()).admitOnly(new PeerAdmissions()).start())
        .isInstanceOf(dev.confine.SandboxException.class)
        .hasMessageContaining("needs a TCP listener");
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void connectTunnelsCarryBytesBothWays(Transport transport) throws Exception {
    requireTransport(transport);
    try (EgressProxy proxy = start(allowOrigin(), transport)) {
      var r =
          Clients.curl(
              "--proxytunnel",
              "--proxy",
              proxy.httpUrl().orElseThrow(),
              "--data-binary",
              "ping",
              url("origin.test", "/echo"));
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).isEqualTo("ping");
      assertThat(decisions.poll(5, TimeUnit.SECONDS).protocol()).isEqualTo(ProxyProtocol.CONNECT);
      ProxyConnection c = closed.poll(10, TimeUnit.SECONDS);
      assertThat(c).isNotNull();
      assertThat(c.error()).isEmpty();
      assertThat(c.bytesOut()).isGreaterThan(4);
      assertThat(c.bytesIn()).isGreaterThan(4);
    }
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void socks5hNamesAreDecidedByTheProxy(Transport transport) throws Exception {
    requireTransport(transport);
    try (EgressProxy proxy = start(allowOrigin(), transport)) {
      var r = Clients.curl("--proxy", proxy.socksUrl().orElseThrow(), url("origin.test", "/hello"));
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).isEqualTo("hello");
      ProxyDecision d = decisions.poll(5, TimeUnit.SECONDS);
      assertThat(d.protocol()).isEqualTo(ProxyProtocol.SOCKS5);
      assertThat(d.host()).isEqualTo("origin.test");
      var denied = Clients.curl("--proxy", proxy.socksUrl().orElseThrow(), url("public.test", "/"));
      assertThat(denied.status()).isNotZero();
      // curl: "Can't complete SOCKS5 connection to public.test. (2)": not allowed by ruleset.
      assertThat(denied.err()).contains("public.test. (2)");
    }
  }

  @Test
  void aRefusalNamesTheHostThePortTheReasonAndTheMode() throws Exception {
    try (EgressProxy proxy =
        start(allowOrigin(NetRule.deny("also-origin.test")), Transport.best())) {
      String http = proxy.httpUrl().orElseThrow();
      var notListed = Clients.curl("-i", "--proxy", http, "http://public.test:8080/x");
      assertThat(notListed.out())
          .startsWith("HTTP/1.1 403")
          .contains("public.test:8080")
          .contains("not in the allow-list")
          .contains("policy mode allow_list");
      var byRule = Clients.curl("-i", "--proxy", http, url("also-origin.test", "/"));
      assertThat(byRule.out())
          .startsWith("HTTP/1.1 403")
          .contains("denied by rule \"deny also-origin.test\"");
      var tunnel = Clients.curl("-i", "--proxytunnel", "--proxy", http, "http://public.test:443/");
      assertThat(tunnel.err()).contains("403");
      var loopbackName =
          Clients.curl("-i", "--proxy", http, "http://elsewhere.test:" + origin.port() + "/");
      assertThat(loopbackName.out()).startsWith("HTTP/1.1 403").contains("127.0.0.2 is loopback");
      assertThat(origin.seen()).isEmpty();
    }
  }

  @Test
  void withoutTheTokenClientsGet407AndSocksClientsAreRefused() throws Exception {
    try (EgressProxy proxy = start(allowOrigin(), Transport.best())) {
      int port = proxy.address().orElseThrow().getPort();
      var none = Clients.curl("-i", "--proxy", "http://127.0.0.1:" + port, url("origin.test", "/"));
      assertThat(none.out())
          .startsWith("HTTP/1.1 407")
          .containsIgnoringCase("Proxy-Authenticate: Basic realm=\"confine\"");
      var wrong =
          Clients.curl(
              "-i", "--proxy", "http://confine:wrong@127.0.0.1:" + port, url("origin.test", "/"));
      assertThat(wrong.out()).startsWith("HTTP/1.1 407");
      var socks =
          Clients.curl(
              "--proxy", "socks5h://confine:wrong@127.0.0.1:" + port, url("origin.test", "/"));
      assertThat(socks.status()).isNotZero();
      var socksNone =
          Clients.curl("--proxy", "socks5h://127.0.0.1:" + port, url("origin.test", "/"));
      assertThat(socksNone.status()).isNotZero();
      assertThat(origin.seen()).isEmpty();
      assertThat(proxy.token()).hasValueSatisfying(t -> assertThat(t).hasSize(48));
    }
  }

  @Test
  void theTokenAndHopByHopHeadersNeverReachTheDestination() throws Exception {
    try (EgressProxy proxy = start(allowOrigin(), Transport.best())) {
      var r =
          Clients.curl(
              "--proxy",
              proxy.httpUrl().orElseThrow(),
              "-H",
              "Connection: keep-alive, X-Hop",
              "-H",
              "X-Hop: secret",
              "-H",
              "Proxy-Connection: keep-alive",
              "-H",
              "X-End-To-End: kept",
              url("origin.test", "/"));
      assertThat(r.out()).isEqualTo("hello");
      var headers = origin.seen().get(0).headers();
      assertThat(headers.containsKey("Proxy-authorization")).isFalse();
      assertThat(headers.containsKey("Proxy-connection")).isFalse();
      assertThat(headers.containsKey("X-hop")).isFalse();
      assertThat(headers.getFirst("X-end-to-end")).isEqualTo("kept");
    }
  }

  @Test
  void keepAliveRequestsToOneDestinationShareOneConnection() throws Exception {
    try (EgressProxy proxy = start(allowOrigin(), Transport.best())) {
      String auth = Clients.proxyAuthorization(proxy.token().orElseThrow());
      String one =
          "GET "
              + url("origin.test", "/one")
              + " HTTP/1.1\r\nHost: origin.test\r\n"
              + auth
              + "\r\n";
      String two =
          "GET "
              + url("origin.test", "/two")
              + " HTTP/1.1\r\nHost: origin.test\r\n"
              + auth
              + "Connection: close\r\n\r\n";
      // Both at once: a pipelining client is answered in order.
      String answer = Clients.exchange(proxy.address().orElseThrow(), one + two);
      assertThat(answer.split("HTTP/1.1 200", -1)).hasSize(3);
      assertThat(origin.seen()).extracting(Origin.Seen::uri).containsExactly("/one", "/two");
      assertThat(origin.seen().get(0).remotePort()).isEqualTo(origin.seen().get(1).remotePort());
    }
  }

  @Test
  void anUnreachableAllowedDestinationIs502NotA200ThatCloses() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    NetPolicy policy = NetPolicy.allowList(NetRule.allow("127.0.0.1", closedPort));
    try (EgressProxy proxy = start(policy, Transport.best())) {
      String auth = Clients.proxyAuthorization(proxy.token().orElseThrow());
      String answer =
          Clients.exchange(
              proxy.address().orElseThrow(),
              "CONNECT 127.0.0.1:" + closedPort + " HTTP/1.1\r\n" + auth + "\r\n");
      assertThat(answer)
          .startsWith("HTTP/1.1 502")
          .contains("cannot connect to 127.0.0.1:" + closedPort);
      ProxyConnection c = closed.poll(5, TimeUnit.SECONDS);
      assertThat(c.error()).isNotEmpty();
    }
  }

  @Test
  void aStreamedResponseReachesTheClientWhileTheOriginStillSends() throws Exception {
    try (EgressProxy proxy = start(allowOrigin(), Transport.best())) {
      String auth = Clients.proxyAuthorization(proxy.token().orElseThrow());
      try (Socket s = new Socket()) {
        s.connect(proxy.address().orElseThrow(), 5000);
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        out.write(
            ("GET "
                    + url("origin.test", "/stream")
                    + " HTTP/1.1\r\nHost: origin.test\r\n"
                    + auth
                    + "\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String first = readUntil(s.getInputStream(), "data: first");
        assertThat(first).startsWith("HTTP/1.1 200").contains("data: first");
        origin.releaseStream();
        assertThat(readUntil(s.getInputStream(), "data: second")).contains("data: second");
      }
    }
  }

  private static String readUntil(InputStream in, String marker) throws IOException {
    StringBuilder b = new StringBuilder();
    while (b.indexOf(marker) < 0) {
      int c = in.read();
      if (c < 0) {
        break;
      }
      b.append((char) c);
    }
    return b.toString();
  }

  @Test
  void aConnectHookThatThrowsBlocksTheTunnel() throws Exception {
    EgressProxy proxy =
        EgressProxy.builder(allowOrigin())
            .listenOnLoopback()
            .requireToken(false)
            .resolver(RESOLVER)
            .hooks(
                new ProxyHooks() {
                  @Override
                  public void onConnect(String host, int port) {
                    throw new IllegalStateException("no tunnels today");
                  }
                })
            .start();
    try (proxy) {
      String answer =
          Clients.exchange(
              proxy.address().orElseThrow(),
              "CONNECT origin.test:" + origin.port() + " HTTP/1.1\r\n\r\n");
      assertThat(answer).startsWith("HTTP/1.1 403").contains("blocked by hook: no tunnels today");
      assertThat(proxy.httpUrl()).hasValue("http://" + hostPort(proxy.address().orElseThrow()));
    }
  }

  private static String hostPort(InetSocketAddress a) {
    return "127.0.0.1:" + a.getPort();
  }

  @Test
  void theEnvironmentSendsCommonClientsThroughTheProxy() throws Exception {
    try (EgressProxy proxy = start(allowOrigin(), Transport.best())) {
      Map<String, String> env = proxy.environment();
      assertThat(env)
          .containsEntry("HTTP_PROXY", proxy.httpUrl().orElseThrow())
          .containsEntry("https_proxy", proxy.httpUrl().orElseThrow())
          .containsEntry("ALL_PROXY", proxy.socksUrl().orElseThrow())
          .containsEntry("NO_PROXY", "");
      var r = Clients.run(env, "curl", "-sS", "--max-time", "20", url("origin.test", "/hello"));
      assertThat(r.out()).isEqualTo("hello");
    }
  }

  private static void requireTransport(Transport transport) {
    if (transport == Transport.EPOLL) {
      HostRequirements.require(
          Transport.best() == Transport.EPOLL,
          "Netty's epoll transport cannot load: " + Transport.epollUnavailability().orElse(""));
    }
  }
}
