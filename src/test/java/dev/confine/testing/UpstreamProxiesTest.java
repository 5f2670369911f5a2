package dev.confine.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The upstream-proxy fixtures against a real origin (an {@link HttpServer} on 127.0.0.1): what goes
 * through {@link UpstreamHttpProxy} (tinyproxy) and {@link UpstreamSocksProxy} (dante) reaches the
 * origin and shows in the proxy's log, what lacks the right credentials does not, and a fixture
 * leaves no process or directory behind. The clients are raw sockets, so each test sees the exact
 * bytes the proxy answers.
 */
class UpstreamProxiesTest {
  private static final String BODY = "hello from the origin\n";
  private static final String PASSWORD = "s3cret-pw";

  /** What the origin serves after tinyproxy forwarded {@code path}: its Via names the upstream. */
  private static final String FORWARDED_VIA =
      "%s via=1\\.1 " + UpstreamHttpProxy.VIA_NAME + " \\(tinyproxy/[^)]+\\)";

  private HttpServer origin;
  private String originHostPort;

  /** Per request the origin served: its path and its {@code Via} header ("" when none). */
  private final Queue<String> served = new ConcurrentLinkedQueue<>();

  @BeforeEach
  void startOrigin() throws IOException {
    origin = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    origin.createContext(
        "/",
        exchange -> {
          String via = exchange.getRequestHeaders().getFirst("Via");
          served.add(exchange.getRequestURI().getPath() + " via=" + (via == null ? "" : via));
          byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    origin.start();
    originHostPort = "127.0.0.1:" + origin.getAddress().getPort();
  }

  @AfterEach
  void stopOrigin() {
    origin.stop(0);
  }

  @Test
  void plainHttpThroughTheHttpUpstreamReachesTheOrigin() throws IOException {
    try (UpstreamHttpProxy proxy = UpstreamHttpProxy.start()) {
      assertThat(proxy.url()).isEqualTo("http://127.0.0.1:" + proxy.port());

      String response = exchange(proxy.port(), absoluteGet("/plain", null));

      assertThat(response).startsWith("HTTP/1.").contains(" 200 ").endsWith(BODY);
      assertThat(served).singleElement().asString().matches(FORWARDED_VIA.formatted("/plain"));
      assertThat(proxy.requests())
          .containsExactly("GET http://" + originHostPort + "/plain HTTP/1.1");
      assertThat(proxy.sawTarget(originHostPort)).isTrue();
      assertThat(proxy.sawTarget("127.0.0.1:1")).isFalse();
    }
  }

  @Test
  void connectThroughTheHttpUpstreamTunnelsToTheOriginsEphemeralPort() throws IOException {
    try (UpstreamHttpProxy proxy = UpstreamHttpProxy.start();
        Socket socket = connect(proxy.port())) {
      send(
          socket,
          "CONNECT " + originHostPort + " HTTP/1.1\r\nHost: " + originHostPort + "\r\n\r\n");
      String established = readHead(socket.getInputStream());
      assertThat(established).matches("HTTP/1\\.[01] 200 (?s).*");

      send(
          socket,
          "GET /tunnel HTTP/1.1\r\nHost: " + originHostPort + "\r\nConnection: close\r\n\r\n");
      String response = readAll(socket.getInputStream());

      assertThat(response).startsWith("HTTP/1.1 200 ").endsWith(BODY);
      assertThat(served)
          .as("the tunnel carries the bytes unchanged")
          .containsExactly("/tunnel via=");
      assertThat(proxy.requests()).containsExactly("CONNECT " + originHostPort + " HTTP/1.1");
      assertThat(proxy.sawTarget(originHostPort)).isTrue();
    }
  }

  @Test
  void basicAuthRefusesAMissingOrWrongPasswordAndPassesTheRightOne() throws IOException {
    try (UpstreamHttpProxy proxy = UpstreamHttpProxy.startWithBasicAuth("alice", PASSWORD)) {
      assertThat(proxy.url()).isEqualTo("http://alice:" + PASSWORD + "@127.0.0.1:" + proxy.port());

      String none = exchange(proxy.port(), absoluteGet("/none", null));
      assertThat(none).matches("HTTP/1\\.[01] 407 (?s).*").contains("Proxy-Authenticate: Basic");
      String tunnelWithout = exchange(proxy.port(), connectRequest(null));
      assertThat(tunnelWithout).matches("HTTP/1\\.[01] 407 (?s).*");
      // tinyproxy 1.11 answers a wrong password 401 (with WWW-Authenticate), a missing one 407.
      String wrong = exchange(proxy.port(), absoluteGet("/wrong", "alice:wrong"));
      assertThat(wrong).matches("HTTP/1\\.[01] 40[17] (?s).*");
      assertThat(served).as("nothing refused reached the origin").isEmpty();
      assertThat(proxy.connectionsOpened()).isEmpty();

      String right = exchange(proxy.port(), absoluteGet("/right", "alice:" + PASSWORD));
      assertThat(right).matches("HTTP/1\\.[01] 200 (?s).*").endsWith(BODY);
      try (Socket socket = connect(proxy.port())) {
        send(socket, connectRequest("alice:" + PASSWORD));
        assertThat(readHead(socket.getInputStream())).matches("HTTP/1\\.[01] 200 (?s).*");
      }

      assertThat(served).singleElement().asString().matches(FORWARDED_VIA.formatted("/right"));
      assertThat(proxy.requests()).hasSize(5);
      assertThat(proxy.connectionsOpened()).containsExactly(originHostPort, originHostPort);
    }
  }

  @Test
  void socksWithoutAuthenticationReachesTheOrigin() throws IOException {
    try (UpstreamSocksProxy proxy = UpstreamSocksProxy.start();
        Socket socket = connect(proxy.port())) {
      assertThat(proxy.url()).isEqualTo("socks5://127.0.0.1:" + proxy.port());

      assertThat(greet(socket, 0x00)).isEqualTo(0x00);
      assertThat(socksConnect(socket, origin.getAddress().getPort())).isZero();
      String response = getThroughTunnel(socket, "/socks");

      assertThat(response).startsWith("HTTP/1.1 200 ").endsWith(BODY);
      assertThat(served).containsExactly("/socks via=");
      assertThat(proxy.connects())
          .containsExactly(new UpstreamSocksProxy.Connect("", originHostPort));
      assertThat(proxy.sawTarget(originHostPort)).isTrue();
      assertThat(proxy.sawTarget("127.0.0.1:1")).isFalse();
    }
  }

  @Test
  void socksWithAPasswordRefusesAWrongOneAndPassesTheRightOne() throws IOException {
    try (UpstreamSocksProxy proxy =
        UpstreamSocksProxy.startWithPassword(UpstreamSocksProxy.TEST_USER, PASSWORD)) {
      assertThat(proxy.url())
          .isEqualTo(
              "socks5://"
                  + UpstreamSocksProxy.TEST_USER
                  + ":"
                  + PASSWORD
                  + "@127.0.0.1:"
                  + proxy.port());

      try (Socket noAuth = connect(proxy.port())) {
        assertThat(greet(noAuth, 0x00)).as("no acceptable method").isEqualTo(0xFF);
      }
      try (Socket wrong = connect(proxy.port())) {
        assertThat(greet(wrong, 0x02)).isEqualTo(0x02);
        assertThat(authenticate(wrong, UpstreamSocksProxy.TEST_USER, "wrong")).isNotZero();
      }
      assertThat(proxy.awaitLog("authentication failed for user \"" + UpstreamSocksProxy.TEST_USER))
          .as("dante's log: %s", proxy.accessLog())
          .isTrue();
      assertThat(proxy.connects()).isEmpty();

      try (Socket right = connect(proxy.port())) {
        assertThat(greet(right, 0x02)).isEqualTo(0x02);
        assertThat(authenticate(right, UpstreamSocksProxy.TEST_USER, PASSWORD)).isZero();
        assertThat(socksConnect(right, origin.getAddress().getPort())).isZero();
        assertThat(getThroughTunnel(right, "/socks-auth"))
            .startsWith("HTTP/1.1 200 ")
            .endsWith(BODY);
      }

      assertThat(served).containsExactly("/socks-auth via=");
      assertThat(proxy.connects())
          .containsExactly(
              new UpstreamSocksProxy.Connect(UpstreamSocksProxy.TEST_USER, originHostPort));
    }
  }

  @Test
  void aPasswordIsNotSetOnAnAccountTheFixtureDidNotMake() {
    // what startWithPassword requires first, so that a host without it skips here too
    HostRequirements.requireProgram("danted");
    HostRequirements.requireRoot();
    HostRequirements.requireProgram("useradd");
    HostRequirements.requireProgram("chpasswd");
    assertThatThrownBy(() -> UpstreamSocksProxy.startWithPassword("root", PASSWORD))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("did not make");
  }

  @Test
  void closingEndsEveryProcessOfTheServerAndRemovesItsDirectory() throws IOException {
    UpstreamSocksProxy socks = UpstreamSocksProxy.start();
    UpstreamHttpProxy http = UpstreamHttpProxy.start();
    try (Socket socket = connect(socks.port())) {
      greet(socket, 0x00); // dante forks its children as it serves
    }
    List<Long> dante = LoopbackServer.groupMembers(socks.pid());
    assertThat(dante).as("dante's processes").hasSizeGreaterThan(1);

    socks.close();
    http.close();

    for (long pid : List.of(socks.pid(), http.pid())) {
      assertThat(LoopbackServer.groupMembers(pid)).isEmpty();
    }
    assertThat(dante.stream().filter(LoopbackServer::running))
        .as("dante's processes running")
        .isEmpty();
    assertThat(socks.directory()).doesNotExist();
    assertThat(http.directory()).doesNotExist();
  }

  @Test
  void aServerThatExitsFailsTheStartWithItsLog() throws IOException {
    assertThatThrownBy(
            () ->
                LoopbackServer.start(
                    "exits",
                    (dir, port) ->
                        List.of("sh", "-c", "echo cannot read the configuration >&2; exit 3")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("exited with 3")
        .hasMessageContaining("cannot read the configuration");
    assertThat(leftDirectories("exits")).isEmpty();
  }

  @Test
  void aServerThatNeverListensFailsTheStartAtTheTimeoutAndIsEnded() throws IOException {
    var before = JvmChildren.pids();
    assertThatThrownBy(
            () ->
                LoopbackServer.start(
                    "never-listens",
                    (dir, port) -> List.of("sh", "-c", "echo still starting; exec sleep 30"),
                    Duration.ofMillis(300),
                    LoopbackServer::freePort))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not listening after 300 ms")
        .hasMessageContaining("still starting");
    assertThat(JvmChildren.pids()).isSubsetOf(before);
    assertThat(leftDirectories("never-listens")).isEmpty();
  }

  @Test
  void aPortTakenBeforeTheServerBindsItIsTriedAgainOnAnother() throws IOException {
    HostRequirements.requireProgram("tinyproxy");
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      AtomicInteger asked = new AtomicInteger();
      IntSupplier ports =
          () -> asked.getAndIncrement() == 0 ? taken.getLocalPort() : LoopbackServer.freePort();
      try (LoopbackServer server =
          LoopbackServer.start(
              "tinyproxy",
              (dir, port) -> {
                Path config = dir.resolve("t.conf");
                Files.writeString(config, "Port " + port + "\nListen 127.0.0.1\n");
                return List.of("tinyproxy", "-d", "-c", config.toString());
              },
              LoopbackServer.START_TIMEOUT,
              ports)) {
        assertThat(asked).hasValue(2);
        assertThat(server.port()).isNotEqualTo(taken.getLocalPort());
      }
    }
  }

  // --- HTTP over raw sockets

  private String absoluteGet(String path, String credentials) {
    return "GET http://%s%s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n"
        .formatted(originHostPort, path, originHostPort, proxyAuthorization(credentials));
  }

  private String connectRequest(String credentials) {
    return "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n"
        .formatted(originHostPort, originHostPort, proxyAuthorization(credentials));
  }

  private static String proxyAuthorization(String credentials) {
    return credentials == null
        ? ""
        : "Proxy-Authorization: Basic "
            + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8))
            + "\r\n";
  }

  /** Sends {@code request} on a new connection to the proxy; all it answered until it closed. */
  private static String exchange(int proxyPort, String request) throws IOException {
    try (Socket socket = connect(proxyPort)) {
      send(socket, request);
      return readAll(socket.getInputStream());
    }
  }

  private String getThroughTunnel(Socket socket, String path) throws IOException {
    send(
        socket,
        "GET " + path + " HTTP/1.1\r\nHost: " + originHostPort + "\r\nConnection: close\r\n\r\n");
    return readAll(socket.getInputStream());
  }

  // --- SOCKS5 over raw sockets (RFC 1928, RFC 1929)

  /** Offers {@code method}; the method the proxy chose (0xFF: none acceptable). */
  private static int greet(Socket socket, int method) throws IOException {
    socket.getOutputStream().write(new byte[] {5, 1, (byte) method});
    byte[] reply = socket.getInputStream().readNBytes(2);
    assertThat(reply).hasSize(2).startsWith(5);
    return reply[1] & 0xff;
  }

  /** RFC 1929 username/password; the status (0: success). */
  private static int authenticate(Socket socket, String user, String password) throws IOException {
    ByteArrayOutputStream request = new ByteArrayOutputStream();
    request.write(1);
    byte[] u = user.getBytes(StandardCharsets.UTF_8);
    byte[] p = password.getBytes(StandardCharsets.UTF_8);
    request.write(u.length);
    request.write(u);
    request.write(p.length);
    request.write(p);
    socket.getOutputStream().write(request.toByteArray());
    byte[] reply = socket.getInputStream().readNBytes(2);
    assertThat(reply).hasSize(2).startsWith(1);
    return reply[1] & 0xff;
  }

  /** CONNECT to 127.0.0.1:{@code port} (IPv4 address type); the reply code (0: succeeded). */
  private static int socksConnect(Socket socket, int port) throws IOException {
    socket
        .getOutputStream()
        .write(new byte[] {5, 1, 0, 1, 127, 0, 0, 1, (byte) (port >> 8), (byte) port});
    byte[] reply = socket.getInputStream().readNBytes(10); // VER REP RSV ATYP=1 ADDR(4) PORT(2)
    assertThat(reply).hasSize(10).startsWith(5);
    return reply[1] & 0xff;
  }

  // --- sockets

  private static Socket connect(int port) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setSoTimeout(5_000);
    return socket;
  }

  private static void send(Socket socket, String text) throws IOException {
    socket.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
    socket.getOutputStream().flush();
  }

  /** The response head up to and including the blank line, read byte by byte. */
  private static String readHead(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      head.append((char) b);
    }
    return head.toString();
  }

  private static String readAll(InputStream in) throws IOException {
    return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
  }

  private static List<Path> leftDirectories(String name) throws IOException {
    try (Stream<Path> dirs = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      return dirs.filter(p -> p.getFileName().toString().startsWith("confine-" + name + "-"))
          .toList();
    }
  }
}
