package dev.confine.net.tls;

import dev.confine.net.tls.TestTlsServer.Handshake;
import java.io.IOException;
import javax.net.ssl.SSLSocket;

/**
 * Run in a JVM of its own whose {@code java.security} re-enables TLS 1.1 and 1.0 (as some hosts'
 * do): the JDK then lets a client offer them, and lets a server accept them unless told not to.
 * Starts a server presenting {@link MitmContexts#serverContext} for localhost, connects a client
 * offering only {@code args[0]} (a TLS version), and prints two lines: {@code client: ok <version>}
 * or {@code client: failed <exception>}, and {@code server: ok} or {@code server: failed
 * <exception>}.
 */
public final class OldTlsProbe {
  private OldTlsProbe() {}

  public static void main(String[] args) throws Exception {
    CertificateAuthority ca = CertificateAuthority.generate();
    try (TestTlsServer server =
        new TestTlsServer(new MitmContexts(ca).serverContext("localhost"))) {
      try (SSLSocket s =
          JdkClients.handshake(
              JdkClients.trustingOnly(ca.certificate()),
              "localhost",
              server.port(),
              new String[] {args[0]})) {
        System.out.println("client: ok " + s.getSession().getProtocol());
      } catch (IOException e) {
        System.out.println("client: failed " + e);
      }
      Handshake h = server.nextHandshake();
      System.out.println(h.failure() == null ? "server: ok" : "server: failed " + h.failure());
    }
  }
}
