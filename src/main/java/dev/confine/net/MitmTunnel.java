package dev.confine.net;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * One intercepted tunnel: the proxy ends the client's TLS with a leaf for the host it asked for,
 * serves HTTP/2 or HTTP/1.1 (as ALPN chose) on it, and sends each request on its own TLS
 * connections to the destination, HTTP/1.1 only, the host name verified.
 *
 * <p>The destination's connections are the tunnel's own: the one dialed before the client was told
 * the tunnel is open, then more dialed to the same checked addresses when needed. An HTTP/1.1
 * client sends one request at a time, so it uses one connection, kept alive between requests;
 * HTTP/2 streams run on up to {@value #H2_CONNECTIONS} at once, the others wait in order.
 * Everything runs on the client channel's event loop.
 */
final class MitmTunnel {
  static final String TLS = "mitm-tls";

  /** Connections to the destination an HTTP/2 client's streams may use at once. */
  static final int H2_CONNECTIONS = 4;

  final ProxyContext px;
  final Mitm mitm;
  final Channel client;
  final Verdict verdict;
  private final String peerHost;
  private final List<Origin> all = new ArrayList<>();
  private final ArrayDeque<Origin> idle = new ArrayDeque<>();
  private final ArrayDeque<MitmExchange> waiting = new ArrayDeque<>();
  private int maxConnections = 1;
  private int dialing;
  private boolean closed;

  MitmTunnel(ProxyContext px, Mitm mitm, Channel client, Verdict verdict, Channel first) {
    this.px = px;
    this.mitm = mitm;
    this.client = client;
    this.verdict = verdict;
    this.peerHost = Mitm.leafName(verdict.decision().host());
    idle.add(adopt(first));
    client
        .closeFuture()
        .addListener(
            f -> {
              closed = true;
              waiting.clear();
              // After the client's channelInactive, which may still report a failed handshake.
              client.eventLoop().execute(() -> List.copyOf(all).forEach(o -> o.channel.close()));
            });
  }

  /** The handler that installs HTTP/2 or HTTP/1.1 once the client's handshake is done. */
  ChannelInboundHandlerAdapter negotiation() {
    return new Negotiation();
  }

  String host() {
    return verdict.decision().host();
  }

  int port() {
    return verdict.decision().port();
  }

  /** {@code host:port} as a message names it. */
  String target() {
    return Authority.format(host(), port());
  }

  // ---- the destination's connections ----

  /** Queues {@code exchange} for a connection; it is {@link MitmExchange#assigned} one in order. */
  void acquire(MitmExchange exchange) {
    waiting.add(exchange);
    dispatch();
  }

  /** Gives a connection back: kept for the next exchange when {@code reusable}, else closed. */
  void release(Origin origin, boolean reusable) {
    origin.exchange = null;
    if (reusable && origin.channel.isActive() && !closed) {
      origin.channel.config().setAutoRead(true);
      idle.add(origin);
    } else {
      origin.channel.close();
    }
    dispatch();
  }

  /** An exchange that no longer waits (its client stream went away). */
  void forget(MitmExchange exchange) {
    waiting.remove(exchange);
  }

  private void dispatch() {
    while (!waiting.isEmpty() && !closed) {
      Origin o = idle.poll();
      if (o != null) {
        if (o.decoder.leftover()) {
          // Bytes beyond the last response: out of step, never to be used again.
          o.channel.close();
        } else if (o.channel.isActive()) {
          o.exchange = waiting.poll();
          o.exchange.assigned(o);
        }
        continue;
      }
      if (all.size() + dialing < maxConnections && dialing < waiting.size()) {
        dial();
        continue;
      }
      break;
    }
  }

  private void dial() {
    dialing++;
    px.dialer
        .tunnel(client.eventLoop(), verdict.targets())
        .addListener(
            f -> {
              dialing--;
              if (!f.isSuccess()) {
                String why = Texts.describe(f.cause());
                Link.failed(px, verdict.decision(), why);
                MitmExchange first = waiting.poll();
                if (first != null) {
                  first.originFailed("cannot connect to " + target() + ": " + why);
                }
              } else if (closed) {
                ((Channel) f.getNow()).close();
              } else {
                idle.add(adopt((Channel) f.getNow()));
              }
              dispatch();
            });
  }

  /** Makes {@code ch}, a connection to the destination, a TLS HTTP/1.1 client of it. */
  private Origin adopt(Channel ch) {
    Link link = Link.open(px, ch, verdict.decision(), "");
    Origin origin = new Origin(ch, link);
    all.add(origin);
    SslHandler tls = mitm.outbound().newHandler(ch.alloc(), peerHost, port());
    tls.setHandshakeTimeout(px.limits.handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS);
    tls.handshakeFuture()
        .addListener(
            f -> {
              if (!f.isSuccess()) {
                origin.fail("TLS handshake with " + target() + " failed: " + tlsFailure(f.cause()));
              }
            });
    // Replacing the holder passes it what came before (a TLS server waits for the client first).
    ch.pipeline().addAfter(Holding.NAME, "http-encoder", new HttpRequestEncoder());
    ch.pipeline().addAfter("http-encoder", "http-decoder", origin.decoder);
    ch.pipeline().addAfter("http-decoder", "origin", origin);
    ch.pipeline().replace(Holding.NAME, TLS, tls);
    ch.closeFuture()
        .addListener(
            f -> {
              all.remove(origin);
              idle.remove(origin);
              MitmExchange e = origin.exchange;
              origin.exchange = null;
              if (e != null) {
                e.originFailed(
                    origin.failure.isEmpty()
                        ? "the destination " + target() + " closed the connection"
                        : origin.failure);
              }
              dispatch();
            });
    ch.config().setAutoRead(true);
    return origin;
  }

  /** One TLS connection to the destination and the exchange it serves, if any. */
  final class Origin extends ChannelInboundHandlerAdapter {
    final Channel channel;
    final Link link;
    final ResponseDecoder decoder = new ResponseDecoder();
    MitmExchange exchange;
    String failure = "";

    Origin(Channel channel, Link link) {
      this.channel = channel;
      this.link = link;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (exchange == null || !(msg instanceof HttpObject o)) {
        // Nothing asked for it: the connection is out of step, not to be used again.
        ReferenceCountUtil.release(msg);
        ctx.close();
        return;
      }
      exchange.fromOrigin(o);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (exchange != null) {
        exchange.originReadComplete();
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      if (exchange != null) {
        exchange.originWritabilityChanged();
      }
      ctx.fireChannelWritabilityChanged();
    }

    /** Records why the connection failed (the first reason only), for the exchange and audit. */
    void fail(String why) {
      if (failure.isEmpty()) {
        failure = why;
        link.error = why;
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      fail("the connection to " + target() + " failed: " + Texts.describe(cause));
      ctx.close();
    }
  }

  /**
   * The destination's responses, HTTP/1.1: told when the request was HEAD (whose response has no
   * body whatever it declares), and able to say whether bytes are left beyond the last response.
   */
  static final class ResponseDecoder extends HttpResponseDecoder {
    boolean head;

    ResponseDecoder() {
      super(
          new HttpDecoderConfig()
              .setMaxInitialLineLength(8192)
              .setMaxHeaderSize(65536)
              .setMaxChunkSize(65536));
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpMessage msg) {
      return head || super.isContentAlwaysEmpty(msg);
    }

    /** Whether bytes are left that belong to no response asked for. */
    boolean leftover() {
      return actualReadableBytes() > 0;
    }
  }

  /** The client's side failed before any request: recorded for the audit of every connection. */
  void clientFailed(String why) {
    all.forEach(o -> o.fail(why));
  }

  // ---- the client's side ----

  /** After the client's handshake: HTTP/2 when ALPN chose it, else HTTP/1.1. */
  private final class Negotiation extends ApplicationProtocolNegotiationHandler {
    Negotiation() {
      super(ApplicationProtocolNames.HTTP_1_1);
    }

    @Override
    protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
      ChannelPipeline p = ctx.pipeline();
      if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
        maxConnections = H2_CONNECTIONS;
        p.addLast(
            Http2FrameCodecBuilder.forServer()
                .initialSettings(
                    Http2Settings.defaultSettings().maxHeaderListSize(px.limits.maxHeaderBytes()))
                .build(),
            new Http2MultiplexHandler(
                new ChannelInitializer<Http2StreamChannel>() {
                  @Override
                  protected void initChannel(Http2StreamChannel stream) {
                    stream
                        .pipeline()
                        .addLast(new Http2StreamFrameToHttpObjectCodec(true))
                        .addLast(new MitmExchange(MitmTunnel.this, true));
                  }
                }));
      } else {
        p.addLast(
            new HttpServerCodec(px.limits.maxRequestLine(), px.limits.maxHeaderBytes(), 65536),
            new HttpServerExpectContinueHandler(),
            new MitmExchange(MitmTunnel.this, false));
      }
    }

    @Override
    protected void handshakeFailure(ChannelHandlerContext ctx, Throwable cause) {
      // The client refused the leaf, spoke no TLS or was too slow: nothing to answer it with.
      clientFailed("the client's TLS handshake failed: " + tlsFailure(cause));
      ctx.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      // Before the handshake is done (this handler is still here): the handshake failed.
      clientFailed("the client's TLS handshake failed: " + tlsFailure(cause));
      ctx.close();
    }
  }

  /** Why a handshake failed; not the hex dump of a whole buffer that was no TLS record. */
  private static String tlsFailure(Throwable cause) {
    Throwable c = unwrap(cause);
    return c instanceof NotSslRecordException ? "it does not speak TLS" : Texts.describe(c);
  }

  private static Throwable unwrap(Throwable cause) {
    return cause.getCause() instanceof SSLException s ? s : cause;
  }
}
