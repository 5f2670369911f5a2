package dev.confine.testing;

import dev.confine.net.tls.TestPki;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real HTTPS proxy for tests to chain to: Debian's stunnel terminating TLS on 127.0.0.1 in front
 * of a {@link UpstreamHttpProxy} (tinyproxy), the way an HTTP proxy is commonly put behind TLS. Its
 * certificate names one host ({@code 127.0.0.1} by default, as an IP SAN) and is signed by a CA of
 * its own ({@link #ca()}), which no trust store holds.
 *
 * <p>{@link #tlsConnections()} counts the TLS connections stunnel accepted, {@link #http()} is the
 * tinyproxy behind it (its log tells what went through). A host without stunnel or tinyproxy skips
 * the test ({@link HostRequirements}).
 */
public final class UpstreamHttpsProxy implements AutoCloseable {
  private static final Pattern ACCEPTED =
      Pattern.compile("Service \\[upstream\\] accepted connection");

  private final UpstreamHttpProxy http;
  private final LoopbackServer tls;
  private final X509Certificate ca;
  private final String userInfo;

  private UpstreamHttpsProxy(
      UpstreamHttpProxy http, LoopbackServer tls, X509Certificate ca, String userInfo) {
    this.http = http;
    this.tls = tls;
    this.ca = ca;
    this.userInfo = userInfo;
  }

  /**
   * Starts stunnel presenting a certificate for {@code certifiedHost} in front of tinyproxy with
   * Basic proxy authentication as {@code user} and {@code password}.
   */
  public static UpstreamHttpsProxy startWithBasicAuth(
      String certifiedHost, String user, String password) {
    HostRequirements.requireProgram("stunnel");
    UpstreamHttpProxy http = UpstreamHttpProxy.startWithBasicAuth(user, password);
    try {
      AtomicReference<X509Certificate> ca = new AtomicReference<>();
      LoopbackServer tls =
          LoopbackServer.start(
              "stunnel",
              (dir, port) -> {
                TestPki pki = TestPki.issue(certifiedHost, dir);
                ca.set(pki.ca());
                Path config = dir.resolve("stunnel.conf");
                Files.writeString(config, config(port, http.port(), pki));
                return List.of("stunnel", config.toString());
              });
      return new UpstreamHttpsProxy(http, tls, ca.get(), user + ":" + password + "@");
    } catch (RuntimeException e) {
      http.close();
      throw e;
    }
  }

  /** In the foreground (its log on the console), no pid file, TLS to tinyproxy's plain port. */
  private static String config(int port, int httpPort, TestPki pki) throws IOException {
    for (Path p : List.of(pki.chain(), pki.key())) {
      if (p.toString().contains("\n")) {
        throw new IOException("a newline in a path: " + p);
      }
    }
    return """
        foreground = yes
        pid =
        debug = info
        [upstream]
        accept = 127.0.0.1:%d
        connect = 127.0.0.1:%d
        cert = %s
        key = %s
        """
        .formatted(port, httpPort, pki.chain(), pki.key());
  }

  /** The CA that signed its certificate. */
  public X509Certificate ca() {
    return ca;
  }

  /** The port it accepts TLS on, at 127.0.0.1. */
  public int port() {
    return tls.port();
  }

  /** {@code https://USER:PASSWORD@HOST:PORT}: {@code host} as the client should name it. */
  public String url(String host) {
    return "https://" + userInfo + host + ":" + port();
  }

  /** The tinyproxy behind it. */
  public UpstreamHttpProxy http() {
    return http;
  }

  /** How many TLS connections it accepted so far (a handshake that then failed included). */
  public int tlsConnections() {
    Matcher m = ACCEPTED.matcher(tls.read(LoopbackServer.CONSOLE));
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }

  /** Ends stunnel and tinyproxy and removes their directories. */
  @Override
  public void close() {
    try {
      tls.close();
    } finally {
      http.close();
    }
  }

  @Override
  public String toString() {
    return "stunnel at 127.0.0.1:" + port() + " in front of " + http;
  }
}
