package dev.confine.net;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

/**
 * Keeps a new channel's inbound messages until the handler that takes them replaces this one
 * ({@code pipeline.replace(Holding.NAME, ...)}): they are passed on, in order, as it is removed.
 */
final class Holding extends ChannelInboundHandlerAdapter {
  static final String NAME = "holding";

  private final ArrayDeque<Object> held = new ArrayDeque<>();
  private boolean inactive;

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    held.add(msg);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {}

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    inactive = true;
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    if (ctx.channel().isRegistered() && ctx.pipeline().last() != null) {
      boolean any = !held.isEmpty();
      while (!held.isEmpty()) {
        ctx.fireChannelRead(held.poll());
      }
      if (any) {
        ctx.fireChannelReadComplete();
      }
      if (inactive) {
        ctx.fireChannelInactive();
      }
    }
    while (!held.isEmpty()) {
      ReferenceCountUtil.release(held.poll());
    }
  }
}
