package dev.confine.net;

import dev.confine.NetPolicy;
import dev.confine.SandboxException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The egress proxy: enforces a {@link NetPolicy} of mode ALLOW_LIST or PROXY for whoever connects
 * to it. One listener speaks both HTTP (absolute-form forwarding and CONNECT tunnels) and SOCKS5
 * (RFC 1928 CONNECT). Every destination is decided by the policy's rules (seed §12-§13, with the
 * changes in {@code docs/proxy.md}), the connection goes to the address that was checked, and
 * refusals say why: HTTP 403 with a line naming the host, the port, the rule or "not in the
 * allow-list" and the mode; SOCKS5 "connection not allowed by ruleset".
 *
 * <pre>{@code
 * try (EgressProxy proxy = EgressProxy.builder(NetPolicy.allowList(NetRule.allow("example.com")))
 *         .listenOnLoopback()
 *         .start()) {
 *   Map<String, String> env = proxy.environment(); // HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, ...
 * }
 * }</pre>
 *
 * <p>On a TCP listener clients must present the proxy's secret {@link #token()} (as the password of
 * HTTP proxy credentials, or of SOCKS5 username/password authentication; any user name), so that
 * other processes of the same host cannot use the proxy; a unix-socket listener, reachable only
 * through its private directory, needs none unless asked.
 *
 * <p>With {@code NetPolicy.mitm()} enabled the proxy intercepts TLS in the tunnels it selects: it
 * makes a CA of its own at start (ECDSA P-256, valid 24 h, its key in memory only), presents leaves
 * it signs for each host, and shows each request and response to the {@link ProxyHooks}. Clients
 * trust it through the CA bundle it writes at start ({@link #caBundle()}; {@link #environment()}
 * names it) and removes on close. See {@code docs/proxy.md}.
 */
public final class EgressProxy implements AutoCloseable {
  /** The hooks of a proxy given none: nothing is shown to anyone, no body is buffered. */
  static final ProxyHooks NO_HOOKS = new ProxyHooks() {};

  private final ProxyServer server;
  private final Optional<String> token;

  private EgressProxy(ProxyServer server, Optional<String> token) {
    this.server = server;
    this.token = token;
  }

  /**
   * Why {@link Builder#listenOn(int)} cannot work here (it needs Netty's epoll transport, which
   * adopts a socket; NIO cannot), or empty when it can.
   */
  public static Optional<String> adoptedListenerUnavailability() {
    return Transport.best() == Transport.EPOLL
        ? Optional.empty()
        : Optional.of(
            "cannot serve a socket made elsewhere without Netty's epoll transport: "
                + Transport.epollUnavailability().orElse("it is not used"));
  }

  /** A builder for a proxy enforcing {@code policy}. */
  public static Builder builder(NetPolicy policy) {
    return new Builder(Objects.requireNonNull(policy, "policy"));
  }

  /** The TCP address it listens on, or empty for a unix socket. */
  public Optional<InetSocketAddress> address() {
    return server.address();
  }

  /** The unix socket it listens on ({@code proxy.sock}, 0600, in a 0700 directory), or empty. */
  public Optional<Path> socketPath() {
    return server.socketPath();
  }

  /**
   * The CA bundle clients trust to accept the intercepted tunnels (PEM: the system's roots, then
   * the proxy's CA; mode 0600 in a private directory, removed on {@link #close()}), or empty when
   * the policy does not intercept TLS.
   */
  public Optional<Path> caBundle() {
    return server.mitm().map(m -> m.bundle().path());
  }

  /** The proxy's CA certificate in PEM, or empty when the policy does not intercept TLS. */
  public Optional<String> caCertificatePem() {
    return server.mitm().map(Mitm::caPem);
  }

  /** The I/O transport serving it (tests check that each one they ask for is the one used). */
  Transport transport() {
    return server.transport();
  }

  /** The secret clients must present, or empty when none is required. */
  public Optional<String> token() {
    return token;
  }

  /**
   * The proxy URL for HTTP clients ({@code http://confine:TOKEN@127.0.0.1:PORT}), or empty for a
   * unix-socket listener (few clients take one).
   */
  public Optional<String> httpUrl() {
    return address().map(a -> "http://" + userInfo() + hostPort(a));
  }

  /** The proxy URL for SOCKS5 clients that leave name resolution to the proxy ({@code socks5h}). */
  public Optional<String> socksUrl() {
    return address().map(a -> "socks5h://" + userInfo() + hostPort(a));
  }

  private String userInfo() {
    return token.map(t -> "confine:" + t + "@").orElse("");
  }

  private static String hostPort(InetSocketAddress a) {
    String host = a.getAddress().getHostAddress();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  /**
   * The variables that send common clients (curl, Python, Node, Go, git, pip, JDK HttpClient via
   * {@code -Djava.net.useSystemProxies}) through this proxy: {@code HTTP_PROXY}, {@code
   * HTTPS_PROXY}, {@code ALL_PROXY} and their lower-case forms, and an empty {@code NO_PROXY}, so
   * that nothing bypasses it. Empty for a unix-socket listener.
   *
   * <p>When the policy intercepts TLS, also the variables that make common clients trust the CA
   * bundle, whatever the listener: {@code SSL_CERT_FILE}, {@code CURL_CA_BUNDLE}, {@code
   * REQUESTS_CA_BUNDLE}, {@code NODE_EXTRA_CA_CERTS}, {@code GIT_SSL_CAINFO}, {@code PIP_CERT} and
   * {@code JAVA_TOOL_OPTIONS} (a PKCS12 trust store; every JVM then prints one "Picked up" line on
   * its stderr, and a child with its own {@code JAVA_TOOL_OPTIONS} should get this value first).
   */
  public Map<String, String> environment() {
    Map<String, String> env = new LinkedHashMap<>();
    server.mitm().ifPresent(m -> env.putAll(m.bundle().environment()));
    httpUrl()
        .ifPresent(
            http -> {
              String socks = socksUrl().orElseThrow();
              for (String name : new String[] {"HTTP_PROXY", "HTTPS_PROXY"}) {
                env.put(name, http);
                env.put(name.toLowerCase(java.util.Locale.ROOT), http);
              }
              env.put("ALL_PROXY", socks);
              env.put("all_proxy", socks);
              env.put("NO_PROXY", "");
              env.put("no_proxy", "");
            });
    return Map.copyOf(env);
  }

  /** Stops listening, closes every connection and removes the socket and its directory. */
  @Override
  public void close() {
    server.close();
  }

  /** Builds and starts an {@link EgressProxy}. */
  public static final class Builder {
    private final NetPolicy policy;
    private ProxyServer.Listen listen = new ProxyServer.Listen.UnixSocket();
    private Boolean requireToken;
    private HostResolver resolver = HostResolver.system();
    private ProxyAuditListener audit = new ProxyAuditListener() {};
    private ProxyHooks hooks = NO_HOOKS;
    private int maxConnections = 4096;
    private int maxRequestLine = 8192;
    private int maxHeaderBytes = 32 * 1024;
    private Duration handshakeTimeout = Duration.ofSeconds(10);
    private Duration idleTimeout = Duration.ofMinutes(5);
    private Duration connectTimeout = Duration.ofSeconds(10);
    private List<X509Certificate> outboundRoots = List.of();
    private Transport transport = Transport.best();
    private int threads = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    private PeerAdmissions admissions;

    private Builder(NetPolicy policy) {
      this.policy = policy;
    }

    /** Listens on 127.0.0.1, on a port the kernel picks. Clients need the token by default. */
    public Builder listenOnLoopback() {
      return listenOnLoopback(0);
    }

    /**
     * Listens on 127.0.0.1:{@code port} (0: the kernel picks). Clients need the token by default.
     */
    public Builder listenOnLoopback(int port) {
      if (port < 0 || port > 65535) {
        throw SandboxException.of(
            SandboxException.Kind.VALIDATION, "listen port " + port + " out of range 0..65535");
      }
      listen = new ProxyServer.Listen.Loopback(port);
      return this;
    }

    /**
     * Listens on a unix socket in a new private directory (the default). No token by default: only
     * this user can reach the socket.
     */
    public Builder listenOnUnixSocket() {
      listen = new ProxyServer.Listen.UnixSocket();
      return this;
    }

    /**
     * Serves a listening TCP socket the caller made (for one inside a network namespace, which the
     * proxy serves from outside it); the proxy owns the descriptor from here on and closes it. No
     * token by default. Needs Netty's epoll transport.
     */
    public Builder listenOn(int listeningSocketFd) {
      if (listeningSocketFd < 0) {
        throw SandboxException.of(
            SandboxException.Kind.VALIDATION, "invalid socket descriptor " + listeningSocketFd);
      }
      listen = new ProxyServer.Listen.Descriptor(listeningSocketFd);
      return this;
    }

    /**
     * Serves, on its TCP listener (on loopback, or one handed in), only the connections {@code
     * admissions} admits (from the 127.0.0.1 ports admitted, each once) and closes every other; no
     * token then. For a caller that makes its clients' connections itself (the confined runner's
     * connect supervisor).
     */
    public Builder admitOnly(PeerAdmissions admissions) {
      this.admissions = Objects.requireNonNull(admissions, "admissions");
      return this;
    }

    /** Whether clients must present the token (default: on loopback TCP only). */
    public Builder requireToken(boolean require) {
      this.requireToken = require;
      return this;
    }

    /** Resolves names (default: {@link HostResolver#system()}). */
    public Builder resolver(HostResolver resolver) {
      this.resolver = Objects.requireNonNull(resolver, "resolver");
      return this;
    }

    /** Receives every decision and every closed connection. */
    public Builder audit(ProxyAuditListener audit) {
      this.audit = Objects.requireNonNull(audit, "audit");
      return this;
    }

    /** Hooks for allowed destinations. */
    public Builder hooks(ProxyHooks hooks) {
      this.hooks = Objects.requireNonNull(hooks, "hooks");
      return this;
    }

    /**
     * The most client connections open at once (default 4,096): beyond, a new connection is closed
     * as soon as it is accepted (and a warning logged once), so that clients cannot exhaust the
     * JVM's file descriptors (each costs two, with its destination's).
     */
    public Builder maxConnections(int connections) {
      this.maxConnections = positive(connections, "max connections");
      return this;
    }

    /** The longest request line (default 8 KiB): longer gets 414. */
    public Builder maxRequestLine(int bytes) {
      this.maxRequestLine = positive(bytes, "max request line");
      return this;
    }

    /** The most header bytes of a request (default 32 KiB): more gets 431. */
    public Builder maxHeaderBytes(int bytes) {
      this.maxHeaderBytes = positive(bytes, "max header bytes");
      return this;
    }

    /**
     * How long a client has from connecting to finish asking (its first request head, or its SOCKS5
     * command); default 10 s.
     */
    public Builder handshakeTimeout(Duration timeout) {
      this.handshakeTimeout = positive(timeout, "handshake timeout");
      return this;
    }

    /** How long a connection may carry nothing either way before it is closed; default 5 min. */
    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = positive(timeout, "idle timeout");
      return this;
    }

    /** How long connecting to a destination (or the upstream) may take; default 10 s. */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connect timeout");
      return this;
    }

    /**
     * The certificate authorities the proxy trusts on its own TLS connections (to an {@code
     * https://} upstream proxy, and to the destinations of intercepted tunnels); default, or when
     * empty, the JDK's trust store (its {@code cacerts}, or the {@code javax.net.ssl.trustStore}
     * the JVM was started with). The upstream's certificate must also name the host of its URL.
     */
    public Builder outboundRoots(Collection<X509Certificate> roots) {
      this.outboundRoots = List.copyOf(Objects.requireNonNull(roots, "roots"));
      return this;
    }

    private static int positive(int n, String what) {
      if (n <= 0) {
        throw SandboxException.of(
            SandboxException.Kind.VALIDATION, what + " must be positive, got " + n);
      }
      return n;
    }

    private static Duration positive(Duration d, String what) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw SandboxException.of(
            SandboxException.Kind.VALIDATION, what + " must be positive, got " + d);
      }
      return d;
    }

    /** Sets the I/O transport (tests: both are exercised); default epoll where it loads. */
    Builder transport(Transport transport) {
      this.transport = transport;
      return this;
    }

    /**
     * Checks the policy and starts the proxy.
     *
     * @throws SandboxException VALIDATION for a policy it cannot enforce (mode other than
     *     ALLOW_LIST or PROXY, an invalid rule pattern, upstream or MITM host entry); NOT_AVAILABLE
     *     when it cannot listen, when the upstream's name does not resolve, or when it cannot make
     *     the CA bundle of its TLS interception
     */
    public EgressProxy start() {
      if (admissions != null && listen instanceof ProxyServer.Listen.UnixSocket) {
        throw SandboxException.of(
            SandboxException.Kind.VALIDATION, "admitOnly needs a TCP listener");
      }
      boolean tokenNeeded =
          requireToken != null
              ? requireToken
              : listen instanceof ProxyServer.Listen.Loopback && admissions == null;
      Optional<String> token = tokenNeeded ? Optional.of(newToken()) : Optional.empty();
      ProxyServer server =
          ProxyServer.start(
              new ProxyServer.Settings(
                  policy,
                  listen,
                  token,
                  resolver,
                  audit,
                  hooks,
                  maxConnections,
                  maxRequestLine,
                  maxHeaderBytes,
                  handshakeTimeout,
                  idleTimeout,
                  connectTimeout,
                  outboundRoots,
                  transport,
                  threads,
                  Optional.ofNullable(admissions)));
      return new EgressProxy(server, token);
    }

    private static String newToken() {
      byte[] bytes = new byte[24];
      new SecureRandom().nextBytes(bytes);
      return HexFormat.of().formatHex(bytes);
    }
  }
}
