package dev.confine.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.function.LongConsumer;

/**
 * Copies one channel's bytes to its peer: written as they are read and flushed once per read burst;
 * when the peer cannot take more (its outbound buffer is over the high-water mark) this channel
 * stops reading until it can. Either side closing closes the other once written out.
 */
final class Relay extends ChannelInboundHandlerAdapter {
  private final Channel peer;
  private final LongConsumer bytes;

  /**
   * @param peer where what this channel reads goes
   * @param bytes told the size of every buffer copied
   */
  Relay(Channel peer, LongConsumer bytes) {
    this.peer = peer;
    this.bytes = bytes;
  }

  /** Joins {@code a} and {@code b} both ways and turns reading on. */
  static void join(Channel a, Channel b, LongConsumer aToB, LongConsumer bToA, String name) {
    a.pipeline().addLast(name, new Relay(b, aToB));
    b.pipeline().addLast(name, new Relay(a, bToA));
    a.config().setAutoRead(true);
    b.config().setAutoRead(true);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof ByteBuf buf) {
      bytes.accept(buf.readableBytes());
    }
    peer.write(msg, peer.voidPromise());
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    peer.flush();
    if (!peer.isWritable()) {
      ctx.channel().config().setAutoRead(false);
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    // This channel drained (or filled): let its peer read again (or stop it).
    peer.config().setAutoRead(ctx.channel().isWritable());
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    closeOnFlush(peer);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }

  /** Closes {@code ch} once what was written to it has gone out. */
  static void closeOnFlush(Channel ch) {
    if (ch.isActive()) {
      ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }
  }
}
