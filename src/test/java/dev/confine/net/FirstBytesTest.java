package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.Test;

/** The names a transparent connection's first bytes carry: SNI and HTTP Host. */
class FirstBytesTest {
  /** The JDK's own first flight as a client of {@code host} (with SNI when not null). */
  static byte[] clientHello(String sni) throws Exception {
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, null, null);
    SSLEngine engine = tls.createSSLEngine("peer.invalid", 443);
    engine.setUseClientMode(true);
    SSLParameters p = engine.getSSLParameters();
    p.setServerNames(sni == null ? List.of() : List.of(new SNIHostName(sni)));
    engine.setSSLParameters(p);
    ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
    engine.wrap(ByteBuffer.allocate(0), out);
    out.flip();
    byte[] b = new byte[out.remaining()];
    out.get(b);
    return b;
  }

  private static String name(byte[] bytes) {
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    int before = in.readerIndex();
    String n = FirstBytes.name(in, 8192);
    assertThat(in.readerIndex()).as("nothing consumed").isEqualTo(before);
    return n;
  }

  @Test
  void theServerNameOfARealClientHello() throws Exception {
    byte[] hello = clientHello("Registry.Example.ORG");
    assertThat(name(hello)).isEqualTo("registry.example.org");
    // Every prefix asks for more; the whole record is needed.
    for (int n = 0; n < hello.length; n += 7) {
      assertThat(name(java.util.Arrays.copyOf(hello, n))).as("prefix %d", n).isNull();
    }
  }

  @Test
  void aClientHelloWithoutAServerNameHasNone() throws Exception {
    assertThat(name(clientHello(null))).isEmpty();
  }

  @Test
  void malformedClientHellosHaveNoneAndNeverThrow() throws Exception {
    byte[] hello = clientHello("a.example");
    for (int i = 5; i < hello.length; i++) {
      for (int v : new int[] {0x00, 0xff, 0x7f}) {
        byte[] broken = hello.clone();
        broken[i] = (byte) v;
        name(broken); // a corrupted name is the decider's to refuse (INVALID)
      }
    }
    byte[] notTls = hello.clone();
    notTls[1] = 9; // not version 3.x
    assertThat(name(notTls)).isEmpty();
    byte[] huge = {0x16, 3, 1, (byte) 0xff, (byte) 0xff};
    assertThat(name(huge)).isEmpty();
  }

  /** A server_name extension too short for its list's length, last in the record: none. */
  @Test
  void anEmptyServerNameExtensionAtTheRecordsEndHasNone() {
    String hello =
        "1603010030" // record: handshake, 48 bytes
            + "0100002c" // ClientHello, 44 bytes
            + "0303" // version
            + "00".repeat(32) // random
            + "00" // session id
            + "0000" // cipher suites
            + "00" // compression methods
            + "0004" // extensions: 4 bytes
            + "00000000"; // server_name, empty, the record's last bytes
    assertThat(name(java.util.HexFormat.of().parseHex(hello))).isEmpty();
  }

  @Test
  void theHostOfAnHttpRequest() {
    assertThat(name(http("GET / HTTP/1.1\r\nHost: Origin.Test:8080\r\nAccept: */*\r\n\r\n")))
        .isEqualTo("origin.test");
    assertThat(name(http("POST /x HTTP/1.1\r\nhost:  a.example\r\n\r\nbody")))
        .isEqualTo("a.example");
    assertThat(name(http("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n"))).isEqualTo("::1");
    assertThat(name(http("GET / HTTP/1.1\r\nHost: a.example"))).as("head not done").isNull();
    assertThat(name(http("GET"))).isNull();
    assertThat(name(http("GET / HTTP/1.0\r\n\r\n"))).as("no Host").isEmpty();
    assertThat(name(http("get / HTTP/1.1\r\n"))).as("not a method").isEmpty();
    assertThat(name(http("GET/ HTTP/1.1\r\n"))).isEmpty();
    assertThat(name(http("SSH-2.0-OpenSSH_9.2\r\n"))).isEmpty();
    assertThat(name(new byte[] {0, 1, 2})).isEmpty();
    assertThat(name(new byte[0])).isNull();
  }

  @Test
  void aHeadLongerThanTheLimitHasNone() {
    String head = "GET / HTTP/1.1\r\nX: " + "a".repeat(9000) + "\r\nHost: a.example\r\n\r\n";
    assertThat(name(http(head))).isEmpty();
    assertThat(name(http("GET / HTTP/1.1\r\nX: " + "a".repeat(9000)))).isEmpty();
  }

  private static byte[] http(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }
}
