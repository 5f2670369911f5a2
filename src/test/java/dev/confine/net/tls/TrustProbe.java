package dev.confine.net.tls;

import java.net.InetSocketAddress;
import java.net.Socket;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * A Java child as the proxy meets it, run in a JVM of its own: connects to 127.0.0.1:{@code
 * args[1]} naming host {@code args[0]}, with the JVM's default trust (what {@code
 * javax.net.ssl.trustStore} says) and endpoint identification HTTPS, and prints the TLS version and
 * the peer's name. Exit 0 when the handshake succeeded, 1 (with the failure on stderr) when not.
 */
public final class TrustProbe {
  private TrustProbe() {}

  public static void main(String[] args) throws Exception {
    String host = args[0];
    int port = Integer.parseInt(args[1]);
    Socket plain = new Socket();
    plain.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
    try (SSLSocket socket =
        (SSLSocket)
            ((SSLSocketFactory) SSLSocketFactory.getDefault())
                .createSocket(plain, host, port, true)) {
      socket.setSoTimeout(10_000);
      SSLParameters params = socket.getSSLParameters();
      params.setEndpointIdentificationAlgorithm("HTTPS");
      socket.setSSLParameters(params);
      socket.startHandshake();
      System.out.println(
          socket.getSession().getProtocol() + " " + socket.getSession().getPeerPrincipal());
    } catch (java.io.IOException e) {
      System.err.println("handshake failed: " + e);
      System.exit(1);
    }
  }
}
