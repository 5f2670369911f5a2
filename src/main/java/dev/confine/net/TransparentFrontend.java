package dev.confine.net;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A connection a supervised child made to some address of its own choosing, which the connect
 * supervisor sent here instead ({@link PeerAdmissions#admitTransparent}). It is decided like a
 * CONNECT to a name when one is known, else to the address the child dialled:
 *
 * <ol>
 *   <li>the name the proxy's own DNS answered with that address, if it did;
 *   <li>else the server name (SNI) of a TLS ClientHello or the Host of an HTTP/1 request, if the
 *       client's first bytes carry one (waiting for them at most {@link #QUIET_MILLIS} ms: a
 *       protocol whose server speaks first is then decided by address);
 *   <li>else the address itself (its IP rules; special addresses denied without one).
 * </ol>
 *
 * A name is connected to at its own checked address, whichever address the child dialled: a
 * ClientHello naming an allowed host on the way to another address (domain fronting) reaches the
 * allowed host, nothing else. Allowed: the bytes held so far go first through the tunnel (or the
 * TLS interception, for a host it intercepts). Refused or unreachable: the connection is reset.
 */
final class TransparentFrontend extends ByteToMessageDecoder {
  /** How long a client that has sent nothing waits before it is decided by address. */
  static final long QUIET_MILLIS = 300;

  private final ProxyContext px;
  private final Handshake handshake;
  private final InetSocketAddress original;
  private boolean deciding;
  private ScheduledFuture<?> quiet;

  TransparentFrontend(ProxyContext px, Handshake handshake, InetSocketAddress original) {
    this.px = px;
    this.handshake = handshake;
    this.original = original;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    String answered = px.answeredName(original.getAddress());
    if (answered != null) {
      decide(ctx, answered);
    } else {
      quiet =
          ctx.executor()
              .schedule(() -> decide(ctx, literal()), QUIET_MILLIS, TimeUnit.MILLISECONDS);
    }
  }

  private String literal() {
    return original.getAddress().getHostAddress();
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (deciding) {
      return; // held until the tunnel takes them
    }
    String name = FirstBytes.name(in, px.limits.maxHeaderBytes());
    if (name == FirstBytes.MORE) {
      return;
    }
    decide(ctx, name.isEmpty() ? literal() : name);
  }

  private void decide(ChannelHandlerContext ctx, String host) {
    if (deciding || !ctx.channel().isOpen()) {
      return;
    }
    deciding = true;
    if (quiet != null) {
      quiet.cancel(false);
    }
    handshake.done();
    ctx.channel().config().setAutoRead(false);
    px.decider
        .decide(ProxyProtocol.TRANSPARENT, host, original.getPort())
        .whenComplete((v, e) -> ctx.executor().execute(() -> decided(ctx, v)));
  }

  private void decided(ChannelHandlerContext ctx, Verdict v) {
    if (!ctx.channel().isActive()) {
      return;
    }
    px.decided(v.decision());
    if (v.outcome() != Verdict.Outcome.ALLOW
        || px.connectBlocked(v.decision().host(), v.decision().port()).isPresent()) {
      reset(ctx.channel());
      return;
    }
    Tunnel.whenDialed(
        px,
        v,
        ctx.channel(),
        px.dialer.tunnel(ctx.channel().eventLoop(), v.targets()),
        cause -> reset(ctx.channel()),
        out -> Tunnel.splice(px, ctx, out, v, List.of()));
  }

  /** Closes with a reset, so that the child reads "connection reset" rather than an empty reply. */
  private static void reset(Channel ch) {
    ch.config().setOption(ChannelOption.SO_LINGER, 0);
    ch.close();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
