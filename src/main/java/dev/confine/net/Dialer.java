package dev.confine.net;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.proxy.HttpProxyHandler;
import io.netty.handler.proxy.ProxyHandler;
import io.netty.handler.proxy.Socks5ProxyHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.resolver.NoopAddressResolverGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLException;

/**
 * Opens the proxy's outbound connections on the client's event loop (so a tunnel's two channels
 * share one thread): to the checked addresses in turn, or through the upstream proxy. Outbound
 * channels start with reading off and end in a {@link Holding} handler, which keeps what arrives
 * before the caller is ready (a destination that speaks first, its bytes in the same read as the
 * upstream's handshake answer); the caller replaces it with its own handler. To an {@code https://}
 * upstream a channel starts with TLS (the upstream's certificate checked against its name), which
 * stays beneath the caller's handler.
 */
final class Dialer {
  private final Transport transport;
  private final Optional<Upstream> upstream;
  private final Optional<InetSocketAddress> upstreamAddress;
  private final Optional<SslContext> upstreamTls;
  private final int connectTimeoutMillis;

  /**
   * @param upstreamTls the client context for an {@code https://} upstream (which verifies the host
   *     name it is given), else empty
   */
  Dialer(
      Transport transport,
      Optional<Upstream> upstream,
      Optional<InetSocketAddress> upstreamAddress,
      Optional<SslContext> upstreamTls,
      int connectTimeoutMillis) {
    this.transport = transport;
    this.upstream = upstream;
    this.upstreamAddress = upstreamAddress;
    this.upstreamTls = upstreamTls;
    this.connectTimeoutMillis = connectTimeoutMillis;
    if (upstreamTls.isPresent() != upstream.map(Upstream::tls).orElse(false)) {
      throw new IllegalArgumentException("TLS context without an https upstream, or the reverse");
    }
  }

  /** Whether plain HTTP is sent, in absolute form, to an HTTP upstream. */
  boolean forwardsToHttpUpstream() {
    return upstream.isPresent() && !upstream.get().socks();
  }

  Optional<Upstream> upstream() {
    return upstream;
  }

  /**
   * A byte stream to the destination: a direct connection, or one through the upstream (HTTP
   * CONNECT or SOCKS5) once its handshake is done.
   */
  Future<Channel> tunnel(EventLoop loop, List<InetSocketAddress> targets) {
    if (upstream.isEmpty()) {
      return direct(loop, targets);
    }
    return throughUpstream(loop, targets.get(0));
  }

  /**
   * A connection to send forwarded HTTP requests on: to the destination, or to an HTTP upstream
   * (which gets absolute-form requests), or through a SOCKS5 upstream.
   */
  Future<Channel> forwarding(EventLoop loop, List<InetSocketAddress> targets) {
    if (forwardsToHttpUpstream()) {
      Future<Channel> connected = direct(loop, List.of(upstreamAddress.orElseThrow()));
      return upstreamTls.isEmpty() ? connected : overTls(loop, connected);
    }
    return tunnel(loop, targets);
  }

  /** A TLS handler to the upstream, checking its certificate against the upstream's name. */
  private SslHandler upstreamTlsHandler(Channel ch) {
    Upstream u = upstream.orElseThrow();
    SslHandler tls = upstreamTls.orElseThrow().newHandler(ch.alloc(), u.host(), u.port());
    tls.setHandshakeTimeoutMillis(connectTimeoutMillis);
    return tls;
  }

  /** {@code connected} once TLS to the upstream is established over it. */
  private Future<Channel> overTls(EventLoop loop, Future<Channel> connected) {
    Promise<Channel> promise = loop.newPromise();
    connected.addListener(
        done -> {
          if (!done.isSuccess()) {
            promise.tryFailure(done.cause());
            return;
          }
          Channel ch = connected.getNow();
          SslHandler tls = upstreamTlsHandler(ch);
          // Reads what the handshake needs itself, although the channel does not read yet.
          ch.pipeline().addBefore(Holding.NAME, "upstream-tls", tls);
          tls.handshakeFuture()
              .addListener(
                  shaken -> {
                    if (!shaken.isSuccess()) {
                      ch.close();
                      promise.tryFailure(upstreamTlsFailure(shaken.cause()));
                    } else if (!promise.trySuccess(ch)) {
                      ch.close();
                    }
                  });
        });
    return promise;
  }

  private SSLException upstreamTlsFailure(Throwable cause) {
    return new SSLException(
        "TLS to the upstream proxy " + upstream.orElseThrow() + " failed: " + cause.getMessage(),
        cause);
  }

  private Bootstrap bootstrap(EventLoop loop) {
    return new Bootstrap()
        .group(loop)
        .channelFactory(transport::tcpClient)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.AUTO_READ, false)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis);
  }

  private Future<Channel> direct(EventLoop loop, List<InetSocketAddress> targets) {
    Promise<Channel> promise = loop.newPromise();
    attempt(loop, targets, 0, promise, null);
    return promise;
  }

  private void attempt(
      EventLoop loop,
      List<InetSocketAddress> targets,
      int index,
      Promise<Channel> promise,
      Throwable last) {
    if (index >= targets.size()) {
      promise.tryFailure(last);
      return;
    }
    ChannelFuture f =
        bootstrap(loop)
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    ch.pipeline().addLast(Holding.NAME, new Holding());
                  }
                })
            .connect(targets.get(index));
    f.addListener(
        done -> {
          if (done.isSuccess()) {
            if (!promise.trySuccess(f.channel())) {
              f.channel().close();
            }
          } else {
            attempt(loop, targets, index + 1, promise, done.cause());
          }
        });
  }

  private Future<Channel> throughUpstream(EventLoop loop, InetSocketAddress target) {
    Upstream u = upstream.orElseThrow();
    InetSocketAddress proxyAddress = upstreamAddress.orElseThrow();
    ProxyHandler handler =
        u.socks()
            ? u.user().isEmpty()
                ? new Socks5ProxyHandler(proxyAddress)
                : new Socks5ProxyHandler(proxyAddress, u.user(), u.password())
            : u.user().isEmpty()
                ? new HttpProxyHandler(proxyAddress)
                : new HttpProxyHandler(proxyAddress, u.user(), u.password());
    handler.setConnectTimeoutMillis(connectTimeoutMillis);
    Promise<Channel> promise = loop.newPromise();
    ChannelFuture f =
        bootstrap(loop)
            // The target goes to the upstream as it is (a name stays a name): no local lookup.
            .resolver(NoopAddressResolverGroup.INSTANCE)
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    if (upstreamTls.isPresent()) {
                      SslHandler tls = upstreamTlsHandler(ch);
                      tls.handshakeFuture()
                          .addListener(
                              shaken -> {
                                if (!shaken.isSuccess()) {
                                  // Said before the proxy handler's "disconnected".
                                  promise.tryFailure(upstreamTlsFailure(shaken.cause()));
                                }
                              });
                      ch.pipeline().addLast("upstream-tls", tls);
                    }
                    ch.pipeline().addLast("upstream", handler).addLast(Holding.NAME, new Holding());
                  }
                })
            .connect(target);
    f.addListener(
        done -> {
          if (!done.isSuccess()) {
            promise.tryFailure(done.cause());
          }
        });
    handler
        .connectFuture()
        .addListener(
            done -> {
              if (done.isSuccess()) {
                if (!promise.trySuccess(f.channel())) {
                  f.channel().close();
                }
              } else {
                f.channel().close();
                promise.tryFailure(done.cause());
              }
            });
    return promise;
  }
}
