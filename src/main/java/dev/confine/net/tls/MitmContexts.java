package dev.confine.net.tls;

import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolConfig.Protocol;
import io.netty.handler.ssl.ApplicationProtocolConfig.SelectedListenerFailureBehavior;
import io.netty.handler.ssl.ApplicationProtocolConfig.SelectorFailureBehavior;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLException;

/**
 * The Netty TLS contexts of the proxy's interception: for each intercepted host, the server context
 * that presents the CA's leaf for it to the child ({@link #serverContext}); and the client context
 * of the proxy's own connection to the real host ({@link #clientContext()}). All use the JDK's TLS
 * ({@link SslProvider#JDK}) and only TLS 1.3 and 1.2.
 *
 * <p>Leaves and their server contexts are made on first use and kept per exact host string, the
 * {@value #DEFAULT_MAX_HOSTS} most recently used (least recently used first out). A host asked for
 * by several threads at once gets one leaf, made once, while other hosts' leaves are made in
 * parallel. A kept leaf that has expired is replaced on its next use. Thread-safe.
 */
public final class MitmContexts {
  /** How many hosts' leaves and contexts are kept by default. */
  static final int DEFAULT_MAX_HOSTS = 4096;

  /** The TLS versions spoken on both sides. */
  static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  /**
   * To the child: h2 preferred, else HTTP/1.1; a child offering neither gets no ALPN answer rather
   * than a failed handshake.
   */
  private static final ApplicationProtocolConfig SERVER_ALPN =
      new ApplicationProtocolConfig(
          Protocol.ALPN,
          SelectorFailureBehavior.NO_ADVERTISE,
          SelectedListenerFailureBehavior.ACCEPT,
          ApplicationProtocolNames.HTTP_2,
          ApplicationProtocolNames.HTTP_1_1);

  /** To the real host: HTTP/1.1 only. */
  private static final ApplicationProtocolConfig CLIENT_ALPN =
      new ApplicationProtocolConfig(
          Protocol.ALPN,
          SelectorFailureBehavior.NO_ADVERTISE,
          SelectedListenerFailureBehavior.ACCEPT,
          ApplicationProtocolNames.HTTP_1_1);

  private final CertificateAuthority ca;
  private final Map<String, Slot> slots; // guarded by itself

  /** Contexts for leaves that {@code ca} signs, keeping {@value #DEFAULT_MAX_HOSTS} hosts. */
  public MitmContexts(CertificateAuthority ca) {
    this(ca, DEFAULT_MAX_HOSTS);
  }

  /** Contexts for leaves that {@code ca} signs, keeping {@code maxHosts} hosts. */
  MitmContexts(CertificateAuthority ca, int maxHosts) {
    this.ca = Objects.requireNonNull(ca, "ca");
    if (maxHosts < 1) {
      throw new IllegalArgumentException("maxHosts must be at least 1: " + maxHosts);
    }
    this.slots =
        new LinkedHashMap<>(16, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Slot> eldest) {
            return size() > maxHosts;
          }
        };
  }

  /** The CA that signs the leaves. */
  public CertificateAuthority authority() {
    return ca;
  }

  /**
   * The server context that presents {@code host}'s leaf and the chain [leaf, CA] to a child: TLS
   * 1.3 and 1.2, ALPN offering {@code h2} then {@code http/1.1}. Made on first use, then kept (the
   * same instance for the same host string). The proxy adds {@code
   * serverContext(host).newHandler(channel.alloc())} to the child's channel once it knows the host
   * (from the CONNECT line, or the ClientHello's SNI) and reads the negotiated protocol from the
   * handler's {@code applicationProtocol()} after the handshake.
   *
   * @throws IllegalArgumentException when {@code host} is blank or not printable ASCII
   * @throws TlsMaterialException when the leaf or its context cannot be made
   */
  public SslContext serverContext(String host) {
    return served(host).context();
  }

  /** The leaf presented for {@code host}, made on first use, then kept with its context. */
  Leaf leaf(String host) {
    return served(host).leaf();
  }

  /** How many hosts' leaves are kept now. */
  int keptHosts() {
    synchronized (slots) {
      return slots.size();
    }
  }

  private Served served(String host) {
    CertificateAuthority.checkHost(host);
    Slot slot;
    synchronized (slots) {
      slot = slots.computeIfAbsent(host, Slot::new);
    }
    return slot.get();
  }

  /**
   * The client context for the proxy's connections to the real hosts, trusting the JDK's default
   * trust (its {@code cacerts}, or the {@code javax.net.ssl.trustStore} this JVM was started with).
   * See {@link #clientContext(List)}.
   */
  public static SslContext clientContext() {
    return client(null);
  }

  /**
   * The client context for the proxy's connections to the real hosts, trusting only {@code roots}:
   * TLS 1.3 and 1.2, ALPN offering {@code http/1.1} only.
   *
   * <p>The context verifies the host name (endpoint identification {@code HTTPS}, RFC 2818: the
   * certificate's DNS or IP subject alternative names) against the peer host of each engine, so the
   * caller must name the host: {@code clientContext.newHandler(channel.alloc(), host, port)}, which
   * also sends it as SNI when it is a DNS name. The name verified is that {@code host} string,
   * whatever address the channel connected to. An engine made without a host ({@code
   * newHandler(alloc)}) fails every handshake. A caller that makes its own engine sets the same
   * itself: {@code SSLParameters p = engine.getSSLParameters();
   * p.setEndpointIdentificationAlgorithm("HTTPS"); engine.setSSLParameters(p);}.
   *
   * @throws IllegalArgumentException when {@code roots} is empty
   */
  public static SslContext clientContext(List<X509Certificate> roots) {
    if (roots.isEmpty()) {
      throw new IllegalArgumentException("a client context needs at least one trusted root");
    }
    return client(List.copyOf(roots));
  }

  private static SslContext client(List<X509Certificate> roots) {
    SslContextBuilder builder =
        SslContextBuilder.forClient()
            .sslProvider(SslProvider.JDK)
            .protocols(PROTOCOLS)
            .endpointIdentificationAlgorithm("HTTPS")
            .applicationProtocolConfig(CLIENT_ALPN);
    if (roots != null) {
      builder.trustManager(roots);
    }
    try {
      return builder.build();
    } catch (SSLException e) {
      throw new TlsMaterialException("cannot make the proxy's client TLS context", e);
    }
  }

  /**
   * The server context presenting {@code leaf}. Its key manager is made here rather than by Netty
   * from the key and chain: Netty puts them in a PKCS12 store, whose key protection (PBKDF2, 10,000
   * rounds, once to store the key and once to read it back) made a context cost 5 ms; an in-memory
   * JKS store, never written anywhere, costs a few microseconds.
   */
  private static SslContext server(String host, Leaf leaf) {
    try {
      char[] password = new char[0];
      KeyStore store = KeyStore.getInstance("JKS");
      store.load(null, null);
      store.setKeyEntry("leaf", leaf.key(), password, leaf.chain().toArray(new Certificate[0]));
      KeyManagerFactory keyManagers =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keyManagers.init(store, password);
      return SslContextBuilder.forServer(keyManagers)
          .sslProvider(SslProvider.JDK)
          .protocols(PROTOCOLS)
          .applicationProtocolConfig(SERVER_ALPN)
          .build();
    } catch (GeneralSecurityException | IOException e) {
      throw new TlsMaterialException("cannot make the server TLS context for " + host, e);
    }
  }

  /** A host's leaf and the server context that presents it. */
  private record Served(Leaf leaf, SslContext context, Instant notAfter) {
    Served(Leaf leaf, SslContext context) {
      this(leaf, context, leaf.certificate().getNotAfter().toInstant());
    }
  }

  /**
   * One host's place in the cache: the leaf is made under the slot's own lock, so that one host is
   * made once and others meanwhile. A failure leaves the slot empty, to be tried again.
   */
  private final class Slot {
    private final String host;
    private Served served; // guarded by this

    Slot(String host) {
      this.host = host;
    }

    synchronized Served get() {
      if (served == null || !served.notAfter().isAfter(ca.now())) {
        Leaf leaf = ca.issue(host);
        served = new Served(leaf, server(host, leaf));
      }
      return served;
    }
  }
}
