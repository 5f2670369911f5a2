package dev.confine.net;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpServerCodec;
import java.util.List;

/**
 * One listener serves both protocols: a client's first byte tells them apart (5 is a SOCKS5
 * greeting; an HTTP request starts with a method's letter). A SOCKS4 greeting (4) is refused by
 * closing. This handler then replaces itself with the protocol's handlers, which see every byte.
 */
final class Sniffer extends ByteToMessageDecoder {
  private final ProxyContext px;
  private final Handshake handshake;

  Sniffer(ProxyContext px, Handshake handshake) {
    this.px = px;
    this.handshake = handshake;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (!in.isReadable()) {
      return;
    }
    byte first = in.getByte(in.readerIndex());
    if (first == 5) {
      SocksFrontend.install(ctx.channel(), px, handshake);
    } else if (first == 4) {
      in.skipBytes(in.readableBytes());
      ctx.close();
      return;
    } else {
      ctx.pipeline()
          .addLast(
              HttpFrontend.CODEC,
              new HttpServerCodec(px.limits.maxRequestLine(), px.limits.maxHeaderBytes(), 65536))
          .addLast("http", new HttpFrontend(px, handshake));
    }
    // Removing a decoder passes the bytes it holds to the handlers after it.
    ctx.pipeline().remove(this);
  }
}
