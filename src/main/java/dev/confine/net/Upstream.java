package dev.confine.net;

import dev.confine.SandboxException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import java.util.Optional;

/**
 * The upstream proxy the egress proxy chains to: {@code http://[user:password@]host[:port]} (Basic
 * proxy authentication; port 80 when none, as Go's and curl's clients assume), {@code https://...}
 * (the same spoken over TLS to the proxy, its certificate checked against {@code host}; port 443
 * when none) or {@code socks5://[user:password@]host[:port]} (RFC 1929; port 1080 when none).
 *
 * @param scheme how to speak to it
 * @param host its host
 * @param port its port
 * @param user the user name, or empty for no credentials
 * @param password the password (may be empty)
 */
record Upstream(Scheme scheme, String host, int port, String user, String password) {

  /**
   * Parses a validated {@code NetPolicy.proxy()} URL.
   *
   * @throws SandboxException VALIDATION when it is not one this proxy can use
   */
  public static Upstream parse(String url) {
    URI uri;
    try {
      uri = new URI(url);
    } catch (URISyntaxException e) {
      throw invalid(url, e.getReason());
    }
    String name = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    Scheme scheme =
        switch (name) {
          case "http" -> Scheme.HTTP;
          case "https" -> Scheme.HTTPS;
          case "socks5", "socks5h" -> Scheme.SOCKS5;
          default ->
              throw invalid(url, "scheme " + Texts.quote(name) + " is not http, https or socks5");
        };
    String host = uri.getHost();
    if (host == null || host.isEmpty()) {
      throw invalid(url, "no host (or one this proxy cannot connect to)");
    }
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port = uri.getPort() >= 0 ? uri.getPort() : scheme.defaultPort;
    String user = "";
    String password = "";
    String info = uri.getRawUserInfo();
    if (info != null) {
      int colon = info.indexOf(':');
      user = decode(colon < 0 ? info : info.substring(0, colon));
      password = colon < 0 ? "" : decode(info.substring(colon + 1));
    }
    return new Upstream(scheme, host, port, user, password);
  }

  /** How the egress proxy speaks to an upstream, and the port it has when its URL names none. */
  enum Scheme {
    HTTP(80),
    HTTPS(443),
    SOCKS5(1080);

    final int defaultPort;

    Scheme(int defaultPort) {
      this.defaultPort = defaultPort;
    }
  }

  /** Whether it is a SOCKS5 proxy (else HTTP, over TLS or not). */
  boolean socks() {
    return scheme == Scheme.SOCKS5;
  }

  /** Whether the connection to it is TLS. */
  boolean tls() {
    return scheme == Scheme.HTTPS;
  }

  private static String decode(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  private static SandboxException invalid(String url, String why) {
    return SandboxException.of(
        SandboxException.Kind.VALIDATION, "invalid upstream proxy " + redacted(url) + ": " + why);
  }

  /** The URL with any password replaced by {@code ***}, for messages. */
  static String redacted(String url) {
    return Texts.quote(url.replaceFirst("(://[^/@:]*):[^/@]*@", "$1:***@"));
  }

  /** Its address, unresolved: resolved when connecting. */
  InetSocketAddress address() {
    return InetSocketAddress.createUnresolved(host, port);
  }

  /** The {@code Proxy-Authorization} value for an HTTP upstream with credentials. */
  Optional<String> basicAuthorization() {
    if (user.isEmpty()) {
      return Optional.empty();
    }
    String pair = user + ":" + password;
    return Optional.of(
        "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8)));
  }

  @Override
  public String toString() {
    return scheme.name().toLowerCase(Locale.ROOT)
        + "://"
        + (user.isEmpty() ? "" : user + ":***@")
        + host
        + ":"
        + port;
  }
}
