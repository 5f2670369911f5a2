package dev.confine.net;

import dev.confine.MitmPolicy;
import dev.confine.SandboxException;
import dev.confine.net.tls.CaBundle;
import dev.confine.net.tls.CertificateAuthority;
import dev.confine.net.tls.MitmContexts;
import io.netty.handler.ssl.SslContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The proxy's TLS interception (seed §13.6): which tunnels it terminates, the CA and the leaves it
 * presents, the TLS context of its own connections to the destinations, the body rules and the CA
 * bundle clients are pointed at. One per proxy, made at start; thread-safe.
 */
final class Mitm implements AutoCloseable {
  /** The most body bytes shown to hooks when the policy names no cap. */
  static final int DEFAULT_MAX_BODY = 64 * 1024;

  /** The largest cap that fits a buffer. */
  static final long MAX_BODY_LIMIT = Integer.MAX_VALUE - 8;

  private final MitmContexts contexts;
  private final SslContext outbound;
  private final boolean inspectBodies;
  private final int maxBody;
  private final List<HostPattern> hosts;
  private final List<HostPattern> excluded;
  private final CaBundle bundle;

  private Mitm(
      MitmContexts contexts,
      SslContext outbound,
      boolean inspectBodies,
      int maxBody,
      List<HostPattern> hosts,
      List<HostPattern> excluded,
      CaBundle bundle) {
    this.contexts = contexts;
    this.outbound = outbound;
    this.inspectBodies = inspectBodies;
    this.maxBody = maxBody;
    this.hosts = hosts;
    this.excluded = excluded;
    this.bundle = bundle;
  }

  /**
   * Compiles {@code policy}'s host lists and makes the CA, the contexts and the bundle.
   *
   * @param outbound the client TLS context of the connections to the destinations
   * @throws SandboxException VALIDATION for a host entry that does not compile or a body cap too
   *     large to buffer
   */
  static Mitm start(MitmPolicy policy, SslContext outbound) {
    List<HostPattern> hosts = compile(policy.hosts(), "mitm.hosts");
    List<HostPattern> excluded = compile(policy.excludeHosts(), "mitm.exclude_hosts");
    if (policy.maxBodyBytes() > MAX_BODY_LIMIT) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "mitm.max_body_bytes "
              + policy.maxBodyBytes()
              + " is more than a body buffer holds (at most "
              + MAX_BODY_LIMIT
              + ")");
    }
    int maxBody = policy.maxBodyBytes() > 0 ? (int) policy.maxBodyBytes() : DEFAULT_MAX_BODY;
    CertificateAuthority ca = CertificateAuthority.generate();
    return new Mitm(
        new MitmContexts(ca),
        outbound,
        policy.inspectBodies(),
        maxBody,
        hosts,
        excluded,
        CaBundle.create(ca));
  }

  private static List<HostPattern> compile(List<String> entries, String what) {
    List<HostPattern> out = new ArrayList<>();
    for (String e : entries) {
      try {
        out.add(HostPattern.compile(e));
      } catch (IllegalArgumentException ex) {
        throw SandboxException.of(
            SandboxException.Kind.VALIDATION,
            what + " entry " + Texts.quote(e) + ": " + ex.getMessage());
      }
    }
    return List.copyOf(out);
  }

  /**
   * Whether a tunnel to {@code host} is intercepted: not when an excluded pattern matches; else
   * when the include list is empty or one of its patterns matches. IP literals match IP and CIDR
   * patterns, names match name patterns.
   */
  boolean intercepts(String host) {
    return !matches(excluded, host) && (hosts.isEmpty() || matches(hosts, host));
  }

  private static boolean matches(List<HostPattern> patterns, String host) {
    Optional<byte[]> ip = HostNames.ipLiteral(host);
    if (ip.isPresent()) {
      return patterns.stream().anyMatch(p -> p.matchesAddress(ip.get()));
    }
    String name;
    try {
      name = HostNames.normalise(host);
    } catch (IllegalArgumentException e) {
      return false;
    }
    return patterns.stream().anyMatch(p -> p.matchesName(name));
  }

  /**
   * The name a leaf is made for and the destination's certificate is checked against: an IP
   * literal's address, or the normalised name.
   */
  static String leafName(String host) {
    Optional<byte[]> ip = HostNames.ipLiteral(host);
    return ip.isPresent() ? HostNames.format(ip.get()) : HostNames.normalise(host);
  }

  /** The server context presenting {@code host}'s leaf (made on first use, then kept). */
  SslContext serverContext(String host) {
    return contexts.serverContext(leafName(host));
  }

  /** The client context of the proxy's connections to destinations: HTTP/1.1, names verified. */
  SslContext outbound() {
    return outbound;
  }

  boolean inspectBodies() {
    return inspectBodies;
  }

  int maxBody() {
    return maxBody;
  }

  CaBundle bundle() {
    return bundle;
  }

  String caPem() {
    return contexts.authority().pem();
  }

  /** Removes the CA bundle's files. */
  @Override
  public void close() {
    bundle.close();
  }
}
