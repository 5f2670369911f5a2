package dev.confine.net.tls;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/** JDK TLS clients for the handshake tests: they connect to 127.0.0.1 whatever host they name. */
final class JdkClients {
  private JdkClients() {}

  /** A JDK TLS context that trusts {@code roots} and nothing else. */
  static SSLContext trustingOnly(X509Certificate... roots)
      throws GeneralSecurityException, IOException {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    for (int i = 0; i < roots.length; i++) {
      store.setCertificateEntry("root-" + i, roots[i]);
    }
    TrustManagerFactory trust = TrustManagerFactory.getInstance("PKIX");
    trust.init(store);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, trust.getTrustManagers(), null);
    return context;
  }

  /**
   * Connects to 127.0.0.1:{@code port}, naming {@code host} (SNI when a name, and the name the
   * certificate must match: endpoint identification HTTPS), and finishes the handshake.
   *
   * @param protocols the TLS versions offered (null: the JDK's)
   * @param alpn the application protocols offered (null: none)
   */
  static SSLSocket handshake(
      SSLContext context, String host, int port, String[] protocols, String... alpn)
      throws IOException {
    Socket plain = new Socket();
    plain.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
    SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(plain, host, port, true);
    try {
      socket.setSoTimeout(10_000);
      SSLParameters params = socket.getSSLParameters();
      params.setEndpointIdentificationAlgorithm("HTTPS");
      if (protocols != null) {
        params.setProtocols(protocols);
      }
      if (alpn.length > 0) {
        params.setApplicationProtocols(alpn);
      }
      socket.setSSLParameters(params);
      socket.startHandshake();
      return socket;
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
  }
}
