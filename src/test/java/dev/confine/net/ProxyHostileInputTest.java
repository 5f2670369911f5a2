package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.testing.OpenFds;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hostile clients: malformed and oversized requests get a clear 4xx and a closed connection,
 * garbage on the SOCKS side a closed connection, slow clients the handshake deadline, and thousands
 * of such connections leave no thread or descriptor behind. {@link ProxyFuzzTest} fuzzes both
 * protocols.
 */
class ProxyHostileInputTest {
  private static EgressProxy proxy;

  @BeforeAll
  static void start() {
    // Long enough for a SOCKS5 greeting and command on a loaded machine, short enough for the
    // deadline test.
    proxy = hostileProxy(Duration.ofMillis(1500));
  }

  /** A proxy for hostile clients: no token, a short handshake deadline. */
  static EgressProxy hostileProxy(Duration handshakeTimeout) {
    return EgressProxy.builder(NetPolicy.allowList(NetRule.allow("origin.test")))
        .listenOnLoopback()
        .requireToken(false)
        .resolver(EgressProxyTest.RESOLVER)
        .handshakeTimeout(handshakeTimeout)
        .start();
  }

  @AfterAll
  static void stop() {
    proxy.close();
  }

  private static InetSocketAddress address() {
    return proxy.address().orElseThrow();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "GET /relative HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET https://origin.test/ HTTP/1.1\r\n\r\n",
        "GET http://user@origin.test/ HTTP/1.1\r\n\r\n",
        "GET http://origin.test:99999/ HTTP/1.1\r\n\r\n",
        "GET http://:80/ HTTP/1.1\r\n\r\n",
        "GET http://[::1/ HTTP/1.1\r\n\r\n",
        "CONNECT /x HTTP/1.1\r\n\r\n",
        "CONNECT origin.test:0 HTTP/1.1\r\n\r\n",
        "CONNECT exa\u00e9mple.com:443 HTTP/1.1\r\n\r\n",
        "NOT A REQUEST\r\n\r\n",
        "GET http://origin.test/ HTTP/1.1\r\nBad Header Line\r\n\r\n",
      })
  void malformedRequestsGet400AndAClosedConnection(String request) throws IOException {
    String answer = Clients.exchange(address(), request);
    assertThat(answer)
        .startsWith("HTTP/1.1 400")
        .contains("connection: close")
        .contains("confine egress proxy: ");
  }

  @Test
  void aRequestLineTooLongGets414() throws IOException {
    String answer =
        Clients.exchange(
            address(), "GET http://origin.test/" + "a".repeat(10_000) + " HTTP/1.1\r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 414");
  }

  @Test
  void headersTooLargeGet431() throws IOException {
    String header = "X-Big: " + "b".repeat(8000) + "\r\n";
    String answer =
        Clients.exchange(
            address(), "GET http://origin.test/ HTTP/1.1\r\n" + header.repeat(5) + "\r\n");
    assertThat(answer).startsWith("HTTP/1.1 431");
  }

  @Test
  void aNonAsciiHostIsDecidedInPunycodeAndRefused() throws IOException {
    String answer = Clients.exchange(address(), "GET http://münchen.example/ HTTP/1.1\r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 400");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "GET http://origin.test/ HTTP/1.1\r\n", "\u0005", "\u0005\u0001"})
  void aClientThatStopsHalfwayIsClosedAtTheHandshakeDeadline(String partial) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(address(), 5000);
      s.setSoTimeout(5000);
      s.getOutputStream().write(partial.getBytes(StandardCharsets.ISO_8859_1));
      long start = System.nanoTime();
      assertThat(s.getInputStream().read()).isEqualTo(-1);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "05 00",
        "05 01 07",
        "05 02 00 02 ff ff ff",
        "04 01 00 50 7f 00 00 01 00",
        "05 01 00 05 09 00 01 7f 00 00 01 00 50",
      })
  void garbageOnTheSocksSideClosesTheConnection(String hex) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(address(), 5000);
      s.setSoTimeout(5000);
      s.getOutputStream().write(java.util.HexFormat.ofDelimiter(" ").parseHex(hex));
      assertThat(drain(s.getInputStream())).isLessThan(64);
    }
  }

  @Test
  void socksCommandsOtherThanConnectAreUnsupported() throws IOException {
    try (Socket s = new Socket()) {
      s.connect(address(), 5000);
      s.setSoTimeout(5000);
      OutputStream out = s.getOutputStream();
      out.write(new byte[] {5, 1, 0});
      InputStream in = s.getInputStream();
      assertThat(in.readNBytes(2)).containsExactly(5, 0);
      // UDP ASSOCIATE 0.0.0.0:0
      out.write(new byte[] {5, 3, 0, 1, 0, 0, 0, 0, 0, 0});
      byte[] reply = in.readNBytes(2);
      assertThat(reply).containsExactly(5, 7);
    }
  }

  @Test
  void aDeniedSocksConnectGetsNotAllowedByRuleset() throws IOException {
    try (Socket s = new Socket()) {
      s.connect(address(), 5000);
      s.setSoTimeout(5000);
      OutputStream out = s.getOutputStream();
      out.write(new byte[] {5, 1, 0});
      InputStream in = s.getInputStream();
      in.readNBytes(2);
      byte[] name = "public.test".getBytes(StandardCharsets.US_ASCII);
      ByteBuffer b = ByteBuffer.allocate(7 + name.length);
      b.put(new byte[] {5, 1, 0, 3, (byte) name.length}).put(name).putShort((short) 443);
      out.write(b.array());
      assertThat(in.readNBytes(2)).containsExactly(5, 2);
    }
  }

  @Test
  void theUnixSocketListenerIsPrivateAndServesWithoutAToken() throws Exception {
    EgressProxy unix =
        EgressProxy.builder(NetPolicy.allowList(NetRule.allow("origin.test")))
            .resolver(EgressProxyTest.RESOLVER)
            .start();
    Path socket;
    try (unix) {
      socket = unix.socketPath().orElseThrow();
      assertThat(unix.token()).isEmpty();
      assertThat(unix.environment()).isEmpty();
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)))
          .isEqualTo("rw-------");
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent())))
          .isEqualTo("rwx------");
      try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
        ch.write(
            ByteBuffer.wrap(
                "GET http://public.test/ HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
        ByteBuffer answer = ByteBuffer.allocate(4096);
        while (ch.read(answer) > 0) {}
        assertThat(new String(answer.array(), 0, answer.position(), StandardCharsets.US_ASCII))
            .startsWith("HTTP/1.1 403")
            .contains("not in the allow-list");
      }
    }
    assertThat(socket).doesNotExist();
    assertThat(socket.getParent()).doesNotExist();
  }

  /**
   * A client that opens connections without end (a confined child can) meets the connection limit:
   * beyond it each is closed at once, and a slot freed is taken again.
   */
  @Test
  void connectionsBeyondTheLimitAreClosedAtOnce() throws Exception {
    try (EgressProxy limited =
        EgressProxy.builder(NetPolicy.allowList(NetRule.allow("origin.test")))
            .listenOnLoopback()
            .requireToken(false)
            .resolver(EgressProxyTest.RESOLVER)
            .maxConnections(3)
            .start()) {
      InetSocketAddress a = limited.address().orElseThrow();
      java.util.List<Socket> open = new java.util.ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          open.add(idleClient(a));
        }
        for (Socket s : open) {
          assertThat(readsNothingFor(s, 300)).as("an admitted client stays open").isTrue();
        }
        for (int i = 0; i < 5; i++) {
          try (Socket refused = idleClient(a)) {
            assertThat(refused.getInputStream().read()).as("closed at once").isEqualTo(-1);
          }
        }
        open.remove(0).close();
        Thread.sleep(100); // the proxy sees the close
        Socket again = idleClient(a);
        open.add(again);
        assertThat(readsNothingFor(again, 300)).isTrue();
      } finally {
        for (Socket s : open) {
          s.close();
        }
      }
    }
  }

  private static Socket idleClient(InetSocketAddress a) throws IOException {
    Socket s = new Socket();
    s.connect(a, 5000);
    s.setSoTimeout(5000);
    return s;
  }

  /** True when nothing arrives, and the connection stays open, for {@code millis}. */
  private static boolean readsNothingFor(Socket s, int millis) throws IOException {
    s.setSoTimeout(millis);
    try {
      s.getInputStream().read();
      return false;
    } catch (java.net.SocketTimeoutException e) {
      return true;
    } finally {
      s.setSoTimeout(5000);
    }
  }

  @Test
  void tenThousandHostileConnectionsLeaveNoThreadOrDescriptor() throws Exception {
    Random random = new Random(18);
    String[] requests = {
      "GET /x HTTP/1.1\r\n\r\n",
      "\u0005\u0001\u0007",
      "garbage\r\n\r\n",
      "GET http://public.test/ HTTP/1.1\r\n\r\n"
    };
    hammer(random, requests, 500);
    long fds = OpenFds.count();
    int threads = Thread.activeCount();
    hammer(random, requests, 10_000);
    Thread.sleep(200);
    assertThat(OpenFds.count()).isLessThanOrEqualTo(fds + 5);
    assertThat(Thread.activeCount()).isLessThanOrEqualTo(threads + 2);
  }

  private static void hammer(Random random, String[] requests, int n) throws IOException {
    for (int i = 0; i < n; i++) {
      try (Socket s = new Socket()) {
        s.connect(address(), 5000);
        s.setSoTimeout(5000);
        s.setSoLinger(true, 0);
        s.getOutputStream()
            .write(requests[random.nextInt(requests.length)].getBytes(StandardCharsets.ISO_8859_1));
        drain(s.getInputStream());
      }
    }
  }

  private static int drain(InputStream in) throws IOException {
    int n = 0;
    byte[] buf = new byte[4096];
    for (int r; (r = in.read(buf)) > 0; ) {
      n += r;
    }
    return n;
  }
}
