package dev.confine.net;

import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.SandboxException;
import dev.confine.net.tls.MitmContexts;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The egress proxy's server: one listener that speaks HTTP (forwarding and CONNECT) and SOCKS5, on
 * Netty. Built and owned by {@code dev.confine.net.EgressProxy}.
 */
final class ProxyServer implements AutoCloseable {
  private static final int RESOLVER_THREADS = 4;
  private static final int DNS_PORT = 53;

  /** How long an accepted connection waits for its admission before it is closed. */
  private static final long ADMISSION_WAIT_MILLIS = 2000;

  private final EventLoopGroup group;
  private final ExecutorService resolverThreads;
  private final Channel listener;
  private final Optional<Path> socketDirectory;
  private final Transport transport;
  private final Optional<Mitm> mitm;

  private ProxyServer(
      EventLoopGroup group,
      ExecutorService resolverThreads,
      Channel listener,
      Optional<Path> socketDirectory,
      Transport transport,
      Optional<Mitm> mitm) {
    this.group = group;
    this.resolverThreads = resolverThreads;
    this.listener = listener;
    this.socketDirectory = socketDirectory;
    this.transport = transport;
    this.mitm = mitm;
  }

  /** Where the server listens. */
  public sealed interface Listen {
    /** TCP on 127.0.0.1, the port given or (0) one the kernel picks. */
    record Loopback(int port) implements Listen {}

    /** A unix socket {@code proxy.sock} (0600) in a new private (0700) directory. */
    record UnixSocket() implements Listen {}

    /** A listening TCP socket the caller made (the descriptor is adopted: closed on close). */
    record Descriptor(int fd) implements Listen {}
  }

  /** Everything the server needs; see {@code EgressProxy.Builder}. */
  public record Settings(
      NetPolicy policy,
      Listen listen,
      Optional<String> token,
      HostResolver resolver,
      ProxyAuditListener audit,
      ProxyHooks hooks,
      int maxConnections,
      int maxRequestLine,
      int maxHeaderBytes,
      Duration handshakeTimeout,
      Duration idleTimeout,
      Duration connectTimeout,
      List<X509Certificate> outboundRoots,
      Transport transport,
      int threads,
      Optional<PeerAdmissions> admissions) {}

  /**
   * Checks the policy, compiles its rules and starts listening.
   *
   * @throws SandboxException VALIDATION for a policy this proxy cannot take (mode, rules, upstream,
   *     MITM host entries), NOT_AVAILABLE when it cannot listen or cannot make its TLS
   *     interception's CA and bundle
   */
  public static ProxyServer start(Settings s) {
    AtomicBoolean adopted = new AtomicBoolean();
    try {
      return start(s, adopted);
    } catch (RuntimeException | Error e) {
      // A socket handed in is the proxy's from the call on: closed unless a channel took it (and
      // closes it itself).
      if (s.listen() instanceof Listen.Descriptor d && !adopted.get()) {
        try {
          new FileDescriptor(d.fd()).close();
        } catch (IOException | RuntimeException | LinkageError closing) {
          e.addSuppressed(closing);
        }
      }
      throw e;
    }
  }

  private static ProxyServer start(Settings s, AtomicBoolean adopted) {
    NetPolicy policy = s.policy().validate();
    if (policy.mode() != NetMode.ALLOW_LIST && policy.mode() != NetMode.PROXY) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "the egress proxy enforces mode allow_list or proxy, not "
              + Answers.modeName(policy.mode()));
    }
    RuleMatcher matcher = RuleMatcher.compile(policy);
    Optional<Upstream> upstream =
        policy.proxy().isEmpty() ? Optional.empty() : Optional.of(Upstream.parse(policy.proxy()));
    Optional<InetSocketAddress> upstreamAddress = upstream.map(ProxyServer::resolveUpstream);
    if (s.listen() instanceof Listen.Descriptor && s.transport() != Transport.EPOLL) {
      throw SandboxException.of(
          SandboxException.Kind.NOT_AVAILABLE,
          "adopting a listening socket needs Netty's epoll transport, which cannot load here: "
              + Transport.epollUnavailability().orElse("it was not chosen"));
    }
    boolean mitmOn = policy.mitm() != null && policy.mitm().enabled();
    boolean upstreamTls = upstream.map(Upstream::tls).orElse(false);
    Optional<SslContext> outbound =
        mitmOn || upstreamTls ? Optional.of(outboundTls(s.outboundRoots())) : Optional.empty();
    Optional<Mitm> mitm =
        mitmOn ? Optional.of(mitm(policy, outbound.orElseThrow())) : Optional.empty();
    ExecutorService resolverThreads;
    EventLoopGroup group;
    try {
      resolverThreads = resolverThreads();
      group = s.transport().group(s.threads());
    } catch (RuntimeException e) {
      mitm.ifPresent(Mitm::close);
      throw e;
    }
    Optional<Path> directory = Optional.empty();
    try {
      Decider decider =
          new Decider(policy.mode(), matcher, s.resolver(), resolverThreads, upstream.isPresent());
      Dialer dialer =
          new Dialer(
              s.transport(),
              upstream,
              upstreamAddress,
              upstreamTls ? outbound : Optional.empty(),
              (int) s.connectTimeout().toMillis());
      ProxyContext px =
          new ProxyContext(
              decider,
              dialer,
              new ProxyContext.ProxyLimits(
                  s.maxConnections(),
                  s.maxRequestLine(),
                  s.maxHeaderBytes(),
                  s.handshakeTimeout(),
                  s.idleTimeout()),
              s.token(),
              s.audit(),
              s.hooks(),
              mitm);
      ServerBootstrap bootstrap =
          new ServerBootstrap()
              .group(group)
              .childOption(ChannelOption.AUTO_READ, true)
              .childHandler(new Initializer(px, s.admissions()));
      Channel ch;
      switch (s.listen()) {
        case Listen.Loopback l -> {
          bootstrap
              .channelFactory(s.transport()::tcpServer)
              .childOption(ChannelOption.TCP_NODELAY, true);
          ch =
              bootstrap
                  .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), l.port()))
                  .sync()
                  .channel();
        }
        case Listen.UnixSocket u -> {
          directory =
              Optional.of(
                  Files.createTempDirectory(
                      "confine-proxy-",
                      PosixFilePermissions.asFileAttribute(
                          PosixFilePermissions.fromString("rwx------"))));
          Path socket = directory.get().resolve("proxy.sock");
          bootstrap.channelFactory(s.transport()::unixServer);
          ch = bootstrap.bind(s.transport().unixAddress(socket)).sync().channel();
          Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        }
        case Listen.Descriptor d -> {
          bootstrap
              .channelFactory(
                  () -> {
                    EpollServerSocketChannel adopting = new EpollServerSocketChannel(d.fd());
                    adopted.set(true);
                    return adopting;
                  })
              .childOption(ChannelOption.TCP_NODELAY, true);
          ch = bootstrap.register().sync().channel();
        }
      }
      return new ProxyServer(group, resolverThreads, ch, directory, s.transport(), mitm);
    } catch (IOException | RuntimeException e) {
      shutdown(group, resolverThreads, directory);
      mitm.ifPresent(Mitm::close);
      throw SandboxException.of(
          SandboxException.Kind.NOT_AVAILABLE,
          "the egress proxy cannot listen: " + e.getMessage(),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      shutdown(group, resolverThreads, directory);
      mitm.ifPresent(Mitm::close);
      throw SandboxException.of(
          SandboxException.Kind.INTERRUPTED, "interrupted while starting the egress proxy", e);
    }
  }

  /**
   * The client TLS context for the proxy's own connections (to an https upstream, to intercepted
   * destinations): the given roots, or the JDK's when none.
   */
  private static SslContext outboundTls(List<X509Certificate> roots) {
    return roots.isEmpty() ? MitmContexts.clientContext() : MitmContexts.clientContext(roots);
  }

  private static Mitm mitm(NetPolicy policy, SslContext outbound) {
    try {
      return Mitm.start(policy.mitm(), outbound);
    } catch (SandboxException e) {
      throw e;
    } catch (RuntimeException e) {
      throw SandboxException.of(
          SandboxException.Kind.NOT_AVAILABLE,
          "the egress proxy cannot make its TLS interception's CA and bundle: " + e.getMessage(),
          e);
    }
  }

  private static InetSocketAddress resolveUpstream(Upstream u) {
    try {
      return new InetSocketAddress(InetAddress.getByName(u.host()), u.port());
    } catch (UnknownHostException e) {
      throw SandboxException.of(
          SandboxException.Kind.NOT_AVAILABLE,
          "cannot resolve the upstream proxy " + u + ": no such host",
          e);
    }
  }

  private static ExecutorService resolverThreads() {
    AtomicInteger n = new AtomicInteger();
    return Executors.newFixedThreadPool(
        RESOLVER_THREADS,
        r -> {
          Thread t = new Thread(r, "confine-proxy-dns-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }

  /** The TCP address it listens on, or empty for a unix socket. */
  public Optional<InetSocketAddress> address() {
    SocketAddress a = listener.localAddress();
    return a instanceof InetSocketAddress i ? Optional.of(i) : Optional.empty();
  }

  /** The unix socket it listens on, or empty for TCP. */
  public Optional<Path> socketPath() {
    return socketDirectory.map(d -> d.resolve("proxy.sock"));
  }

  /** The TLS interception, when the policy asks for it. */
  public Optional<Mitm> mitm() {
    return mitm;
  }

  /** The transport serving it. */
  public Transport transport() {
    return transport;
  }

  /**
   * Stops listening, closes every connection, stops its threads and removes its socket and its CA
   * bundle.
   */
  @Override
  public void close() {
    listener.close().awaitUninterruptibly();
    shutdown(group, resolverThreads, socketDirectory);
    mitm.ifPresent(Mitm::close);
  }

  private static void shutdown(
      EventLoopGroup group, ExecutorService resolvers, Optional<Path> dir) {
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    resolvers.shutdownNow();
    dir.ifPresent(
        d -> {
          try {
            Files.deleteIfExists(d.resolve("proxy.sock"));
            Files.deleteIfExists(d);
          } catch (IOException e) {
            // Left for the temp cleaner: nothing listens on it any more.
          }
        });
  }

  /** Each accepted client: idle limit, handshake deadline, then the protocol sniffer. */
  private static final class Initializer extends ChannelInitializer<Channel> {
    private final ProxyContext px;
    private final Optional<PeerAdmissions> admissions;

    Initializer(ProxyContext px, Optional<PeerAdmissions> admissions) {
      this.px = px;
      this.admissions = admissions;
    }

    @Override
    protected void initChannel(Channel ch) {
      if (!px.admitted()) {
        // Each client costs the JVM descriptors (its own and its destination's): a child that
        // opens connections without end must not exhaust them.
        ch.close();
        return;
      }
      ch.closeFuture().addListener(f -> px.released());
      if (admissions.isEmpty()) {
        serve(ch, null);
        return;
      }
      if (!(ch.remoteAddress() instanceof InetSocketAddress peer)
          || !peer.getAddress().isLoopbackAddress()) {
        ch.close();
        return;
      }
      // The supervisor admits a port once its connect is under way, which may be just after the
      // connection was accepted here: it then waits for its admission, reading nothing.
      int port = peer.getPort();
      Consumer<PeerAdmissions.Admission> waiter =
          a ->
              ch.eventLoop()
                  .execute(
                      () -> {
                        if (ch.isOpen()) {
                          serve(ch, a);
                          ch.config().setAutoRead(true);
                        }
                      });
      PeerAdmissions.Admission admission = admissions.get().takeOrWait(port, waiter);
      if (admission != null) {
        serve(ch, admission);
        return;
      }
      ch.config().setAutoRead(false);
      ch.eventLoop()
          .schedule(
              () -> {
                if (admissions.get().stopWaiting(port, waiter)) {
                  ch.close(); // not a connection made for an admitted client
                }
              },
              ADMISSION_WAIT_MILLIS,
              TimeUnit.MILLISECONDS);
      ch.closeFuture().addListener(f -> admissions.get().stopWaiting(port, waiter));
    }

    /** Idle limit, handshake deadline, then the frontend for {@code admission} (null: none). */
    private void serve(Channel ch, PeerAdmissions.Admission admission) {
      Duration idle = px.limits.idleTimeout();
      Handshake handshake = new Handshake(ch, px.limits.handshakeTimeout());
      ch.pipeline()
          .addLast("idle", new IdleStateHandler(0, 0, idle.toNanos(), TimeUnit.NANOSECONDS))
          .addLast("idle-close", new IdleCloser());
      InetSocketAddress original = admission == null ? null : admission.original();
      if (original == null) {
        ch.pipeline().addLast("sniffer", new Sniffer(px, handshake));
      } else if (original.getPort() == DNS_PORT) {
        handshake.done(); // a resolver may keep its connection for its next questions
        DnsAnswerer.install(ch.pipeline(), px);
      } else {
        ch.pipeline().addLast("sniffer", new TransparentFrontend(px, handshake, original));
      }
    }
  }

  /** Closes a connection that has been idle (no byte either way) for the idle timeout. */
  private static final class IdleCloser extends ChannelInboundHandlerAdapter {
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof IdleStateEvent) {
        ctx.close();
      } else {
        ctx.fireUserEventTriggered(evt);
      }
    }
  }
}
