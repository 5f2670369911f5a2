package dev.confine.net;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.socksx.v5.DefaultSocks5CommandResponse;
import io.netty.handler.codec.socksx.v5.DefaultSocks5InitialResponse;
import io.netty.handler.codec.socksx.v5.DefaultSocks5PasswordAuthResponse;
import io.netty.handler.codec.socksx.v5.Socks5AddressType;
import io.netty.handler.codec.socksx.v5.Socks5AuthMethod;
import io.netty.handler.codec.socksx.v5.Socks5CommandRequest;
import io.netty.handler.codec.socksx.v5.Socks5CommandRequestDecoder;
import io.netty.handler.codec.socksx.v5.Socks5CommandStatus;
import io.netty.handler.codec.socksx.v5.Socks5CommandType;
import io.netty.handler.codec.socksx.v5.Socks5InitialRequest;
import io.netty.handler.codec.socksx.v5.Socks5InitialRequestDecoder;
import io.netty.handler.codec.socksx.v5.Socks5Message;
import io.netty.handler.codec.socksx.v5.Socks5PasswordAuthRequest;
import io.netty.handler.codec.socksx.v5.Socks5PasswordAuthRequestDecoder;
import io.netty.handler.codec.socksx.v5.Socks5PasswordAuthStatus;
import io.netty.handler.codec.socksx.v5.Socks5ServerEncoder;
import io.netty.handler.proxy.ProxyConnectException;
import io.netty.util.ReferenceCountUtil;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.util.List;

/**
 * The SOCKS5 side of a client connection (RFC 1928, CONNECT only; RFC 1929 username and password
 * carrying the token). Names ({@code socks5h}) are decided like HTTP's; IP addresses like IP
 * literals. Anything malformed closes the connection.
 */
final class SocksFrontend extends ChannelInboundHandlerAdapter {
  static final String DECODER = "socks-decoder";
  static final String ENCODER = "socks-encoder";

  private final ProxyContext px;
  private final Handshake handshake;
  private boolean deciding;

  SocksFrontend(ProxyContext px, Handshake handshake) {
    this.px = px;
    this.handshake = handshake;
  }

  /** Installs the SOCKS5 codecs and this handler at the end of {@code ch}'s pipeline. */
  static void install(Channel ch, ProxyContext px, Handshake handshake) {
    ch.pipeline()
        .addLast(ENCODER, Socks5ServerEncoder.DEFAULT)
        .addLast(DECODER, new Socks5InitialRequestDecoder())
        .addLast("socks", new SocksFrontend(px, handshake));
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    try {
      if (!(msg instanceof Socks5Message m) || m.decoderResult().isFailure() || deciding) {
        ctx.close();
        return;
      }
      switch (m) {
        case Socks5InitialRequest greeting -> greet(ctx, greeting);
        case Socks5PasswordAuthRequest auth -> authenticate(ctx, auth);
        case Socks5CommandRequest command -> command(ctx, command);
        default -> ctx.close();
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  private void greet(ChannelHandlerContext ctx, Socks5InitialRequest greeting) {
    boolean password = greeting.authMethods().contains(Socks5AuthMethod.PASSWORD);
    boolean none = greeting.authMethods().contains(Socks5AuthMethod.NO_AUTH);
    if (password && (px.tokenRequired() || !none)) {
      ctx.pipeline().replace(DECODER, DECODER, new Socks5PasswordAuthRequestDecoder());
      ctx.writeAndFlush(new DefaultSocks5InitialResponse(Socks5AuthMethod.PASSWORD));
    } else if (none && !px.tokenRequired()) {
      ctx.pipeline().replace(DECODER, DECODER, new Socks5CommandRequestDecoder());
      ctx.writeAndFlush(new DefaultSocks5InitialResponse(Socks5AuthMethod.NO_AUTH));
    } else {
      ctx.writeAndFlush(new DefaultSocks5InitialResponse(Socks5AuthMethod.UNACCEPTED))
          .addListener(ChannelFutureListener.CLOSE);
    }
  }

  private void authenticate(ChannelHandlerContext ctx, Socks5PasswordAuthRequest auth) {
    if (!px.tokenMatches(auth.password())) {
      ctx.writeAndFlush(new DefaultSocks5PasswordAuthResponse(Socks5PasswordAuthStatus.FAILURE))
          .addListener(ChannelFutureListener.CLOSE);
      return;
    }
    ctx.pipeline().replace(DECODER, DECODER, new Socks5CommandRequestDecoder());
    ctx.writeAndFlush(new DefaultSocks5PasswordAuthResponse(Socks5PasswordAuthStatus.SUCCESS));
  }

  private void command(ChannelHandlerContext ctx, Socks5CommandRequest command) {
    handshake.done();
    if (command.type() != Socks5CommandType.CONNECT) {
      reply(ctx, Socks5CommandStatus.COMMAND_UNSUPPORTED);
      return;
    }
    deciding = true;
    ctx.channel().config().setAutoRead(false);
    String host = command.dstAddr();
    int port = command.dstPort();
    if (port == 0 || host == null || host.isEmpty()) {
      reply(ctx, Socks5CommandStatus.HOST_UNREACHABLE);
      return;
    }
    px.decider
        .decide(ProxyProtocol.SOCKS5, host, port)
        .whenComplete((v, e) -> ctx.executor().execute(() -> decided(ctx, v)));
  }

  private void decided(ChannelHandlerContext ctx, Verdict v) {
    if (!ctx.channel().isActive()) {
      return;
    }
    px.decided(v.decision());
    switch (v.outcome()) {
      case ALLOW -> {}
      case DENY -> {
        reply(ctx, Socks5CommandStatus.FORBIDDEN);
        return;
      }
      case INVALID, UNREACHABLE -> {
        reply(ctx, Socks5CommandStatus.HOST_UNREACHABLE);
        return;
      }
    }
    if (px.connectBlocked(v.decision().host(), v.decision().port()).isPresent()) {
      reply(ctx, Socks5CommandStatus.FORBIDDEN);
      return;
    }
    Tunnel.whenDialed(
        px,
        v,
        ctx.channel(),
        px.dialer.tunnel(ctx.channel().eventLoop(), v.targets()),
        cause -> reply(ctx, statusOf(cause)),
        out -> {
          InetSocketAddress bound =
              out.localAddress() instanceof InetSocketAddress a ? a : new InetSocketAddress(0);
          Socks5AddressType type =
              bound.getAddress() != null && bound.getAddress().getAddress().length == 16
                  ? Socks5AddressType.IPv6
                  : Socks5AddressType.IPv4;
          String boundHost =
              bound.getAddress() == null ? "0.0.0.0" : bound.getAddress().getHostAddress();
          ctx.writeAndFlush(
              new DefaultSocks5CommandResponse(
                  Socks5CommandStatus.SUCCESS, type, boundHost, bound.getPort()));
          Tunnel.splice(px, ctx, out, v, List.of(ENCODER, DECODER));
        });
  }

  private static Socks5CommandStatus statusOf(Throwable cause) {
    if (cause instanceof ConnectTimeoutException) {
      return Socks5CommandStatus.HOST_UNREACHABLE;
    }
    if (cause instanceof ConnectException && !(cause instanceof ProxyConnectException)) {
      return Socks5CommandStatus.CONNECTION_REFUSED;
    }
    if (cause instanceof NoRouteToHostException) {
      return Socks5CommandStatus.HOST_UNREACHABLE;
    }
    return Socks5CommandStatus.FAILURE;
  }

  private static void reply(ChannelHandlerContext ctx, Socks5CommandStatus status) {
    ctx.writeAndFlush(new DefaultSocks5CommandResponse(status, Socks5AddressType.IPv4))
        .addListener(ChannelFutureListener.CLOSE);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
