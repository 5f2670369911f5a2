package dev.confine.net;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every connection's handlers share: the decider, the dialer, the limits, the token, the audit
 * listener, the hooks and the TLS interception, if any.
 */
final class ProxyContext {
  private static final Logger LOG = LoggerFactory.getLogger(ProxyContext.class);

  final Decider decider;
  final Dialer dialer;
  final ProxyLimits limits;
  final Optional<Mitm> mitm;
  private final Optional<byte[]> token;
  private final ProxyAuditListener audit;
  private final ProxyHooks hooks;
  private final AtomicInteger connections = new AtomicInteger();
  private volatile boolean warnedFull;

  ProxyContext(
      Decider decider,
      Dialer dialer,
      ProxyLimits limits,
      Optional<String> token,
      ProxyAuditListener audit,
      ProxyHooks hooks,
      Optional<Mitm> mitm) {
    this.decider = decider;
    this.mitm = mitm;
    this.dialer = dialer;
    this.limits = limits;
    this.token = token.map(t -> t.getBytes(StandardCharsets.UTF_8));
    this.audit = audit;
    this.hooks = hooks;
  }

  /**
   * The name the proxy's DNS last answered with {@code address}, or null: a transparent connection
   * to it is decided by that name.
   */
  String answeredName(InetAddress address) {
    return answered.get(address);
  }

  /** Records that the proxy's DNS answered {@code name} with {@code address}. */
  void answered(InetAddress address, String name) {
    if (answered.size() >= MAX_ANSWERED) {
      answered.clear(); // bounded: a child resolving names without end costs nothing for long
    }
    answered.put(address, name);
  }

  private static final int MAX_ANSWERED = 65536;
  private final Map<InetAddress, String> answered = new ConcurrentHashMap<>();

  /** Whether clients must present the token. */
  boolean tokenRequired() {
    return token.isPresent();
  }

  /** Whether {@code presented} is the token (constant time); true when none is required. */
  boolean tokenMatches(String presented) {
    if (token.isEmpty()) {
      return true;
    }
    return presented != null
        && MessageDigest.isEqual(token.get(), presented.getBytes(StandardCharsets.UTF_8));
  }

  void decided(ProxyDecision decision) {
    try {
      audit.decided(decision);
    } catch (RuntimeException e) {
      LOG.warn("the proxy's audit listener failed on a decision", e);
    }
  }

  void closed(ProxyDecision decision, long out, long in, long startNanos, String error) {
    try {
      audit.closed(
          new ProxyConnection(
              decision, out, in, Duration.ofNanos(System.nanoTime() - startNanos), error));
    } catch (RuntimeException e) {
      LOG.warn("the proxy's audit listener failed on a closed connection", e);
    }
  }

  /** Runs the connect hook: empty when the tunnel may open, else why not. */
  Optional<String> connectBlocked(String host, int port) {
    try {
      hooks.onConnect(host, port);
      return Optional.empty();
    } catch (Exception e) {
      return Optional.of(message(e));
    }
  }

  /**
   * Takes a client connection when fewer than the limit are open: true when it may go on (the
   * caller then calls {@link #released()} once it closes), false when it must be closed at once.
   */
  boolean admitted() {
    if (connections.incrementAndGet() <= limits.maxConnections()) {
      return true;
    }
    connections.decrementAndGet();
    if (!warnedFull) {
      warnedFull = true;
      LOG.warn(
          "the egress proxy refuses connections: {} client connections are open, its limit",
          limits.maxConnections());
    }
    return false;
  }

  /** A client connection that was admitted has closed. */
  void released() {
    connections.decrementAndGet();
  }

  /**
   * Whether hooks were set: without them the interception shows no one anything, buffers nothing.
   */
  boolean hooked() {
    return hooks != EgressProxy.NO_HOOKS;
  }

  /** Runs the request hook: empty when the request may leave, else why not. */
  Optional<String> requestBlocked(ProxyRequest request) {
    try {
      hooks.onRequest(request);
      return Optional.empty();
    } catch (Exception e) {
      return Optional.of(message(e));
    }
  }

  /** Runs the response hook: empty when the response may reach the client, else why not. */
  Optional<String> responseBlocked(ProxyResponse response) {
    try {
      hooks.onResponse(response);
      return Optional.empty();
    } catch (Exception e) {
      return Optional.of(message(e));
    }
  }

  private static String message(Exception e) {
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  /** Limits on how many clients may connect, what they may send and how slowly. */
  record ProxyLimits(
      int maxConnections,
      int maxRequestLine,
      int maxHeaderBytes,
      Duration handshakeTimeout,
      Duration idleTimeout) {}
}
