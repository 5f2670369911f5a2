package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.MitmPolicy;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.SandboxException;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.OpenFds;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TLS interception end to end: curl (HTTP/1.1 and HTTP/2) and a JDK TLS client through the proxy to
 * a local HTTPS origin with its own CA, the proxy trusting that CA for its outbound connections and
 * the clients trusting only the proxy's bundle.
 */
class MitmTest {
  @TempDir Path dir;
  private TlsOrigin origin;
  private final List<ProxyRequest> requests = new CopyOnWriteArrayList<>();
  private final List<ProxyResponse> responses = new CopyOnWriteArrayList<>();
  private final BlockingQueue<ProxyDecision> decisions = new LinkedBlockingQueue<>();
  private final BlockingQueue<ProxyConnection> closed = new LinkedBlockingQueue<>();

  @BeforeEach
  void setUp() throws Exception {
    HostRequirements.requireProgram("curl");
    origin = new TlsOrigin();
  }

  @AfterEach
  void tearDown() {
    origin.close();
  }

  private NetPolicy policy(MitmPolicy mitm) {
    return NetPolicy.builder()
        .mode(NetMode.ALLOW_LIST)
        .rules(
            List.of(
                NetRule.allow("origin.test"),
                NetRule.allow("also-origin.test"),
                NetRule.allow("127.0.0.1", origin.port())))
        .mitm(mitm)
        .build();
  }

  private static MitmPolicy inspecting(long cap) {
    return new MitmPolicy(true, true, cap, List.of(), List.of());
  }

  /** Hooks that record what they see and run {@code onRequest} / {@code onResponse} checks. */
  private ProxyHooks recording(Consumer<ProxyRequest> onRequest, Consumer<ProxyResponse> onResp) {
    return new ProxyHooks() {
      @Override
      public void onRequest(ProxyRequest r) {
        requests.add(r);
        onRequest.accept(r);
      }

      @Override
      public void onResponse(ProxyResponse r) {
        responses.add(r);
        onResp.accept(r);
      }
    };
  }

  private ProxyHooks recording() {
    return recording(r -> {}, r -> {});
  }

  private EgressProxy.Builder builder(MitmPolicy mitm) {
    return EgressProxy.builder(policy(mitm))
        .listenOnLoopback()
        .resolver(EgressProxyTest.RESOLVER)
        .outboundRoots(List.of(origin.ca()))
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
            });
  }

  private EgressProxy start(MitmPolicy mitm, ProxyHooks hooks) {
    return builder(mitm).hooks(hooks).start();
  }

  private String url(String host, String path) {
    return "https://" + host + ":" + origin.port() + path;
  }

  /** What curl -i printed after the proxy's answer to its CONNECT. */
  private static String afterConnect(Clients.Run r) {
    return r.out().replaceFirst("^HTTP/1.1 200 Connection Established\r\n\r\n", "");
  }

  /** curl through the proxy's HTTP listener, trusting only the proxy's bundle. */
  private static Clients.Run curl(EgressProxy proxy, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("--proxy", proxy.httpUrl().orElseThrow()));
    command.addAll(List.of("--cacert", proxy.caBundle().orElseThrow().toString()));
    command.addAll(List.of(args));
    return Clients.curl(command.toArray(String[]::new));
  }

  @Test
  void curlTrustingTheBundleGetsThroughAndTheRequestHookSeesTheRequest() throws Exception {
    try (EgressProxy proxy = start(MitmPolicy.all(), recording())) {
      var r = curl(proxy, "--http1.1", "-H", "X-Test: one", url("origin.test", "/hello?x=1"));
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).isEqualTo("hello");
      assertThat(requests)
          .singleElement()
          .satisfies(
              q -> {
                assertThat(q.method()).isEqualTo("GET");
                assertThat(q.scheme()).isEqualTo("https");
                assertThat(q.host()).isEqualTo("origin.test:" + origin.port());
                assertThat(q.path()).isEqualTo("/hello?x=1");
                assertThat(q.header("X-TEST")).hasValue("one");
                assertThat(q.headers()).containsKey("user-agent");
                assertThat(q.body()).isEmpty();
              });
      assertThat(responses)
          .singleElement()
          .satisfies(
              s -> {
                assertThat(s.status()).isEqualTo(200);
                assertThat(s.header("x-origin")).hasValue("yes");
                assertThat(s.request().path()).isEqualTo("/hello?x=1");
                assertThat(s.body()).isEmpty(); // bodies not inspected
              });
      TlsOrigin.Seen seen = origin.seen().getFirst();
      assertThat(seen.uri()).isEqualTo("/hello?x=1");
      assertThat(seen.headers().get("Host")).isEqualTo("origin.test:" + origin.port());
      assertThat(seen.headers().contains("Proxy-Authorization")).isFalse();
      assertThat(decisions.poll(5, TimeUnit.SECONDS).protocol()).isEqualTo(ProxyProtocol.CONNECT);
    }
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void bothTransportsInterceptHttp2AndHttp11(Transport transport) throws Exception {
    if (transport == Transport.EPOLL) {
      HostRequirements.require(
          Transport.best() == Transport.EPOLL,
          "Netty's epoll transport cannot load: " + Transport.epollUnavailability().orElse(""));
    }
    try (EgressProxy proxy =
        builder(inspecting(0)).hooks(recording()).transport(transport).start()) {
      assertThat(proxy.transport()).isEqualTo(transport);
      var h2 = curl(proxy, "--http2", "-w", " %{http_version}", url("origin.test", "/hello"));
      assertThat(h2.out()).isEqualTo("hello 2");
      var h1 = curl(proxy, "--http1.1", "--data-binary", "ping", url("origin.test", "/echo"));
      assertThat(h1.out()).isEqualTo("ping");
      assertThat(requests).hasSize(2);
    }
  }

  @Test
  void theEnvironmentAloneSendsCurlThroughTheInterception() throws Exception {
    try (EgressProxy proxy = start(MitmPolicy.all(), recording())) {
      Map<String, String> env = proxy.environment();
      assertThat(env)
          .containsEntry("SSL_CERT_FILE", proxy.caBundle().orElseThrow().toString())
          .containsEntry("CURL_CA_BUNDLE", proxy.caBundle().orElseThrow().toString())
          .containsKey("HTTPS_PROXY");
      var r = Clients.run(env, "curl", "-sS", "--max-time", "20", url("origin.test", "/hello"));
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).isEqualTo("hello");
      assertThat(requests).hasSize(1);
    }
  }

  @Test
  void anHttp2ClientIsServedHttp2AndItsStreamsShareTheTunnel() throws Exception {
    try (EgressProxy proxy = start(MitmPolicy.all(), recording())) {
      var r =
          curl(
              proxy,
              "--http2",
              "-w",
              " %{http_version}\n",
              url("origin.test", "/hello"),
              url("origin.test", "/echo"));
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).isEqualTo("hello 2\n 2\n");
      assertThat(requests).extracting(ProxyRequest::path).containsExactly("/hello", "/echo");
      assertThat(requests.getFirst().host()).isEqualTo("origin.test:" + origin.port());
      assertThat(requests.getFirst().headers()).doesNotContainKey("x-http2-stream-id");
      assertThat(origin.seen().get(0).headers().contains("x-http2-stream-id")).isFalse();
      // One tunnel, one decision; its requests went one after the other on one connection.
      assertThat(decisions).hasSize(1);
      assertThat(origin.seen().get(0).remotePort()).isEqualTo(origin.seen().get(1).remotePort());
    }
  }

  @Test
  void http11KeepAliveRequestsShareOneTunnelAndOneConnection() throws Exception {
    try (EgressProxy proxy = start(MitmPolicy.all(), recording())) {
      var r =
          curl(
              proxy,
              "--http1.1",
              url("origin.test", "/one"),
              url("origin.test", "/two"),
              url("origin.test", "/three"));
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).isEqualTo("hellohellohello");
      assertThat(origin.seen())
          .extracting(TlsOrigin.Seen::uri)
          .containsExactly("/one", "/two", "/three");
      assertThat(origin.seen())
          .extracting(TlsOrigin.Seen::remotePort)
          .containsOnly(origin.seen().get(0).remotePort());
      assertThat(decisions).hasSize(1);
    }
  }

  @Test
  void aDestinationThatClosesIsRedialedForTheNextRequest() throws Exception {
    try (EgressProxy proxy = start(MitmPolicy.all(), recording())) {
      var r = curl(proxy, "--http2", url("origin.test", "/close"), url("origin.test", "/hello"));
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).isEqualTo("byehello");
      assertThat(origin.seen().get(0).remotePort()).isNotEqualTo(origin.seen().get(1).remotePort());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"--http1.1", "--http2"})
  void aRequestHookThatThrowsBlocksWith403AndTheOriginSeesNothing(String version) throws Exception {
    ProxyHooks hooks =
        recording(
            q -> {
              throw new IllegalStateException("no uploads");
            },
            s -> {});
    try (EgressProxy proxy = start(MitmPolicy.all(), hooks)) {
      var r = curl(proxy, version, "-i", "--data-binary", "x", url("origin.test", "/echo"));
      assertThat(afterConnect(r))
          .startsWith(version.equals("--http2") ? "HTTP/2 403" : "HTTP/1.1 403")
          .containsIgnoringCase("content-type: text/plain")
          .contains(
              "confine egress proxy: request to https://origin.test:"
                  + origin.port()
                  + "/echo blocked by hook: no uploads");
      if (version.equals("--http1.1")) {
        assertThat(r.out()).containsIgnoringCase("connection: close");
      }
      assertThat(origin.seen()).isEmpty();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"--http1.1", "--http2"})
  void aResponseHookThatThrowsBlocksWith403(String version) throws Exception {
    ProxyHooks hooks =
        recording(
            q -> {},
            s -> {
              throw new IllegalArgumentException("secret in response");
            });
    try (EgressProxy proxy = start(inspecting(0), hooks)) {
      var r = curl(proxy, version, "-i", url("origin.test", "/hello"), url("origin.test", "/x"));
      assertThat(r.out())
          .contains(" 403")
          .contains(
              "response from https://origin.test:"
                  + origin.port()
                  + "/hello blocked by hook: secret in response")
          .doesNotContain("hello\n");
      assertThat(origin.seen()).isNotEmpty();
    }
  }

  @Test
  void inspectedBodiesAreShownToTheHooksAndForwardedIntact() throws Exception {
    try (EgressProxy proxy = start(inspecting(0), recording())) {
      var r =
          curl(
              proxy,
              "--http1.1",
              "-H",
              "Connection: keep-alive, X-Hop",
              "-H",
              "X-Hop: this hop only",
              "--data-binary",
              "ping",
              url("origin.test", "/echo"));
      assertThat(r.out()).isEqualTo("ping");
      assertThat(origin.seen().getFirst().body()).isEqualTo("ping");
      // The hook sees the request as the client sent it; the destination, without hop headers.
      assertThat(requests.getFirst().header("x-hop")).hasValue("this hop only");
      assertThat(origin.seen().getFirst().headers().contains("X-Hop")).isFalse();
      assertThat(requests.getFirst().body())
          .hasValueSatisfying(
              b -> assertThat(new String(b, StandardCharsets.UTF_8)).isEqualTo("ping"));
      assertThat(responses.getFirst().body())
          .hasValueSatisfying(
              b -> assertThat(new String(b, StandardCharsets.UTF_8)).isEqualTo("ping"));
      var h2 = curl(proxy, "--http2", "--data-binary", "pong", url("origin.test", "/echo"));
      assertThat(h2.out()).isEqualTo("pong");
      assertThat(requests.get(1).body())
          .hasValueSatisfying(b -> assertThat(b).asString().isEqualTo("pong"));
    }
  }

  @Test
  void bodiesOverTheCapOrWithoutInspectionAreNotShownButForwarded() throws Exception {
    try (EgressProxy proxy = start(inspecting(3), recording())) {
      var r = curl(proxy, "--http1.1", "--data-binary", "ping", url("origin.test", "/echo"));
      assertThat(r.out()).isEqualTo("ping");
      assertThat(requests.getFirst().body()).isEmpty();
      assertThat(responses.getFirst().body()).isEmpty();
    }
    requests.clear();
    try (EgressProxy proxy = start(MitmPolicy.all(), recording())) {
      var r = curl(proxy, "--http1.1", "--data-binary", "ping", url("origin.test", "/echo"));
      assertThat(r.out()).isEqualTo("ping");
      assertThat(requests.getFirst().body()).isEmpty();
    }
  }

  @Test
  void anEmptyDeclaredBodyIsShownEmpty() throws Exception {
    try (EgressProxy proxy = start(inspecting(0), recording())) {
      var r =
          curl(
              proxy,
              "--http1.1",
              "-X",
              "POST",
              "-H",
              "Content-Length: 0",
              url("origin.test", "/echo"));
      assertThat(r.err()).isEmpty();
      assertThat(requests.getFirst().body()).hasValueSatisfying(b -> assertThat(b).isEmpty());
    }
  }

  @Test
  void aChunkedBodyPassesThroughUnbuffered() throws Exception {
    try (EgressProxy proxy = start(inspecting(0), recording())) {
      var r = curl(proxy, "--http1.1", url("origin.test", "/chunked"));
      assertThat(r.out()).isEqualTo("firstsecond");
      assertThat(responses.getFirst().body()).isEmpty();
      assertThat(responses.getFirst().header("transfer-encoding")).hasValue("chunked");
    }
  }

  @Test
  void aResponseLongerThanItDeclaredIsCutAtItsLengthAndItsConnectionNotReused() throws Exception {
    try (EgressProxy proxy = start(inspecting(0), recording())) {
      var r =
          curl(proxy, "--http1.1", url("origin.test", "/lie-long"), url("origin.test", "/hello"));
      assertThat(r.out()).isEqualTo("hellohello");
      // The hook saw exactly what the client got: the declared five bytes.
      assertThat(responses.getFirst().body())
          .hasValueSatisfying(b -> assertThat(b).asString().isEqualTo("hello"));
      assertThat(origin.seen().get(0).remotePort()).isNotEqualTo(origin.seen().get(1).remotePort());
    }
  }

  @Test
  void aResponseShorterThanItDeclaredIsA502AndNoHookSeesIt() throws Exception {
    try (EgressProxy proxy = start(inspecting(0), recording())) {
      var r = curl(proxy, "--http1.1", "-i", url("origin.test", "/lie-short"));
      assertThat(afterConnect(r)).startsWith("HTTP/1.1 502").contains("closed the connection");
      assertThat(responses).isEmpty();
    }
  }

  @Test
  void anEventStreamsFirstEventArrivesWhileTheOriginStillSends() throws Exception {
    try (EgressProxy proxy = start(inspecting(0), recording())) {
      try (SSLSocket s = tunnel(proxy, "origin.test")) {
        OutputStream out = s.getOutputStream();
        out.write(
            ("GET /sse HTTP/1.1\r\nHost: origin.test\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String first = readUntil(s.getInputStream(), "data: first");
        assertThat(first)
            .startsWith("HTTP/1.1 200")
            .contains("data: first")
            .doesNotContain("second");
        origin.releaseStream();
        assertThat(readUntil(s.getInputStream(), "data: second")).contains("data: second");
      }
      assertThat(responses.getFirst().body()).isEmpty();
    }
  }

  /** A TLS connection through a CONNECT tunnel, trusting only the proxy's CA. */
  private SSLSocket tunnel(EgressProxy proxy, String host) throws Exception {
    Socket raw = new Socket();
    raw.connect(proxy.address().orElseThrow(), 5000);
    raw.setSoTimeout(10_000);
    raw.getOutputStream()
        .write(
            ("CONNECT "
                    + host
                    + ":"
                    + origin.port()
                    + " HTTP/1.1\r\n"
                    + Clients.proxyAuthorization(proxy.token().orElseThrow())
                    + "\r\n")
                .getBytes(StandardCharsets.US_ASCII));
    assertThat(readUntil(raw.getInputStream(), "\r\n\r\n")).startsWith("HTTP/1.1 200");
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry(
        "ca",
        java.security.cert.CertificateFactory.getInstance("X.509")
            .generateCertificate(
                new java.io.ByteArrayInputStream(
                    proxy.caCertificatePem().orElseThrow().getBytes(StandardCharsets.US_ASCII))));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, tmf.getTrustManagers(), null);
    SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket(raw, host, origin.port(), true);
    var p = s.getSSLParameters();
    p.setEndpointIdentificationAlgorithm("HTTPS");
    s.setSSLParameters(p);
    s.startHandshake();
    return s;
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
  void anExcludedHostStaysARawTunnelShowingTheOriginsCertificate() throws Exception {
    MitmPolicy mitm = new MitmPolicy(true, false, 0, List.of(), List.of("origin.test"));
    Path originCa = dir.resolve("origin-ca.pem");
    Files.writeString(originCa, origin.caPem());
    try (EgressProxy proxy = start(mitm, recording())) {
      var trustingTheBundle = curl(proxy, "--http1.1", url("origin.test", "/hello"));
      assertThat(trustingTheBundle.status()).isEqualTo(60); // the origin's certificate, not ours
      var trustingTheOrigin =
          Clients.curl(
              "--proxy",
              proxy.httpUrl().orElseThrow(),
              "--http1.1", // the origin offers h2 but speaks HTTP/1.1
              "--cacert",
              originCa.toString(),
              url("origin.test", "/hello"));
      assertThat(trustingTheOrigin.out()).isEqualTo("hello");
      var other = curl(proxy, "--http1.1", url("also-origin.test", "/hello"));
      assertThat(other.out()).isEqualTo("hello");
      assertThat(requests)
          .extracting(ProxyRequest::host)
          .containsExactly("also-origin.test:" + origin.port());
    }
  }

  @Test
  void anIncludeListInterceptsOnlyItsHosts() throws Exception {
    MitmPolicy mitm =
        new MitmPolicy(true, false, 0, List.of("*.origin.test", "also-origin.test"), List.of());
    try (EgressProxy proxy = start(mitm, recording())) {
      assertThat(curl(proxy, url("also-origin.test", "/hello")).out()).isEqualTo("hello");
      assertThat(curl(proxy, url("origin.test", "/hello")).status()).isEqualTo(60);
      assertThat(requests).hasSize(1);
    }
  }

  @Test
  void ipLiteralsAreSelectedByIpPatternsOnly() throws Exception {
    MitmPolicy byName = new MitmPolicy(true, false, 0, List.of("origin.test"), List.of());
    try (EgressProxy proxy = start(byName, recording())) {
      assertThat(curl(proxy, url("127.0.0.1", "/hello")).status()).isEqualTo(60);
    }
    MitmPolicy byCidr = new MitmPolicy(true, false, 0, List.of("127.0.0.0/8"), List.of());
    try (EgressProxy proxy = start(byCidr, recording())) {
      var r = curl(proxy, url("127.0.0.1", "/hello"));
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).isEqualTo("hello");
      assertThat(curl(proxy, url("origin.test", "/hello")).status()).isEqualTo(60);
      assertThat(requests)
          .extracting(ProxyRequest::host)
          .containsExactly("127.0.0.1:" + origin.port());
    }
  }

  @Test
  void aDestinationWithAnUntrustedCertificateIsA502() throws Exception {
    try (EgressProxy proxy =
        EgressProxy.builder(policy(MitmPolicy.all()))
            .listenOnLoopback()
            .resolver(EgressProxyTest.RESOLVER)
            .hooks(recording())
            .start()) {
      var r = curl(proxy, "-i", "--http1.1", url("origin.test", "/hello"));
      assertThat(afterConnect(r))
          .startsWith("HTTP/1.1 502")
          .contains("TLS handshake with origin.test:" + origin.port() + " failed")
          .doesNotContain("hello\n");
      var h2 = curl(proxy, "-i", "--http2", url("origin.test", "/hello"));
      assertThat(afterConnect(h2)).startsWith("HTTP/2 502");
      assertThat(origin.seen()).isEmpty();
      assertThat(requests).hasSize(2); // the hook ran; the request never left
    }
  }

  @Test
  void aClientRejectingTheProxysCertificateLeaksNothing() throws Exception {
    try (EgressProxy proxy = start(MitmPolicy.all(), recording())) {
      var r = Clients.curl("--proxy", proxy.httpUrl().orElseThrow(), url("origin.test", "/hello"));
      assertThat(r.status()).isEqualTo(60);
      assertThat(origin.seen()).isEmpty();
      assertThat(requests).isEmpty();
      ProxyConnection c = closed.poll(10, TimeUnit.SECONDS);
      assertThat(c).isNotNull();
      assertThat(c.error()).contains("the client's TLS handshake failed");
    }
  }

  @Test
  void socks5TunnelsAreInterceptedToo() throws Exception {
    try (EgressProxy proxy = start(MitmPolicy.all(), recording())) {
      var r =
          Clients.curl(
              "--proxy",
              proxy.socksUrl().orElseThrow(),
              "--cacert",
              proxy.caBundle().orElseThrow().toString(),
              url("origin.test", "/hello"));
      assertThat(r.err()).isEmpty();
      assertThat(r.out()).isEqualTo("hello");
      assertThat(requests).singleElement().satisfies(q -> assertThat(q.path()).isEqualTo("/hello"));
      assertThat(decisions.poll(5, TimeUnit.SECONDS).protocol()).isEqualTo(ProxyProtocol.SOCKS5);
    }
  }

  @Test
  void theBundleExistsWhileTheProxyRunsAndIsRemovedOnClose() throws Exception {
    Path bundle;
    try (EgressProxy proxy = start(MitmPolicy.all(), recording())) {
      bundle = proxy.caBundle().orElseThrow();
      assertThat(bundle).exists();
      assertThat(Files.readString(bundle)).endsWith(proxy.caCertificatePem().orElseThrow());
      assertThat(proxy.caCertificatePem().orElseThrow()).startsWith("-----BEGIN CERTIFICATE-----");
    }
    assertThat(bundle).doesNotExist();
    assertThat(bundle.getParent()).doesNotExist();
    try (EgressProxy plain = EgressProxy.builder(policy(null)).listenOnLoopback().start()) {
      assertThat(plain.caBundle()).isEmpty();
      assertThat(plain.caCertificatePem()).isEmpty();
      assertThat(plain.environment()).doesNotContainKey("SSL_CERT_FILE");
    }
  }

  @Test
  void anInvalidMitmHostIsRefusedAtStart() {
    MitmPolicy mitm = new MitmPolicy(true, false, 0, List.of("a*b.test"), List.of());
    assertThatThrownBy(() -> builder(mitm).start())
        .isInstanceOfSatisfying(
            SandboxException.class,
            e -> assertThat(e.kind()).isEqualTo(SandboxException.Kind.VALIDATION))
        .hasMessageContaining("mitm.hosts entry \"a*b.test\"");
  }

  @Test
  void interceptedTunnelsLeaveNoDescriptorBehind() throws Exception {
    long before = OpenFds.count();
    try (EgressProxy proxy = start(inspecting(0), recording())) {
      for (int i = 0; i < 5; i++) {
        assertThat(curl(proxy, "--http2", url("origin.test", "/hello")).out()).isEqualTo("hello");
        assertThat(
                curl(proxy, "--http1.1", url("origin.test", "/echo"), "--data-binary", "x").out())
            .isEqualTo("x");
        curl(proxy, "--http1.1", url("origin.test", "/lie-short"));
      }
      Clients.curl("--proxy", proxy.httpUrl().orElseThrow(), url("origin.test", "/hello"));
    }
    Thread.sleep(200);
    assertThat(OpenFds.count()).isLessThanOrEqualTo(before + 3);
  }
}
