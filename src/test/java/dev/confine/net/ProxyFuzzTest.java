package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Random bytes on both of the listener's protocols: always refused or closed, never let through.
 */
class ProxyFuzzTest {
  private static EgressProxy proxy;

  @BeforeContainer
  static void start() {
    proxy = ProxyHostileInputTest.hostileProxy(Duration.ofMillis(500));
  }

  @AfterContainer
  static void stop() {
    proxy.close();
  }

  /** Random bytes, with or without a protocol's first byte, never get a 2xx or a connection. */
  @Property(tries = 300)
  void fuzzedBytesNeverGetThrough(@ForAll @Size(max = 600) byte[] bytes, @ForAll boolean socks)
      throws IOException {
    if (socks && bytes.length > 0) {
      bytes[0] = 5;
    }
    try (Socket s = new Socket()) {
      s.connect(proxy.address().orElseThrow(), 5000);
      s.setSoTimeout(5000);
      s.getOutputStream().write(bytes);
      s.shutdownOutput();
      byte[] answer = s.getInputStream().readNBytes(64);
      String text = new String(answer, StandardCharsets.ISO_8859_1);
      assertThat(text).doesNotStartWith("HTTP/1.1 2");
      if (socks && answer.length >= 4 && answer[0] == 5 && answer[1] == 0 && answer.length > 4) {
        throw new AssertionError(
            "SOCKS connect succeeded on fuzz " + java.util.HexFormat.of().formatHex(bytes));
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError("no answer and no close in 5 s", e);
    }
  }
}
