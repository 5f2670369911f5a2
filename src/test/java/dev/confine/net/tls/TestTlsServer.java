package dev.confine.net.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A Netty TLS server on 127.0.0.1 presenting one server context, as the proxy presents a leaf to a
 * child: it records each handshake's outcome and answers an HTTP/1.1 request with {@code ok
 * <negotiated ALPN protocol>}.
 */
final class TestTlsServer implements AutoCloseable {
  /**
   * One handshake as the server saw it.
   *
   * @param protocol the TLS version, when it succeeded
   * @param alpn the negotiated application protocol (null: none), when it succeeded
   * @param failure why it failed, else null
   */
  record Handshake(String protocol, String alpn, Throwable failure) {}

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final BlockingQueue<Handshake> handshakes = new LinkedBlockingQueue<>();
  private final Channel channel;

  TestTlsServer(SslContext context) throws InterruptedException {
    channel =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    SslHandler ssl = context.newHandler(ch.alloc());
                    ssl.handshakeFuture()
                        .addListener(
                            f ->
                                handshakes.add(
                                    f.isSuccess()
                                        ? new Handshake(
                                            ssl.engine().getSession().getProtocol(),
                                            ssl.applicationProtocol(),
                                            null)
                                        : new Handshake(null, null, f.cause())));
                    ch.pipeline()
                        .addLast(ssl, new HttpServerCodec(), new HttpObjectAggregator(1 << 16))
                        .addLast(new Answer(ssl));
                  }
                })
            .bind("127.0.0.1", 0)
            .sync()
            .channel();
  }

  int port() {
    return ((java.net.InetSocketAddress) channel.localAddress()).getPort();
  }

  /** The next handshake the server finished, waiting for it at most 10 s. */
  Handshake nextHandshake() throws InterruptedException {
    Handshake h = handshakes.poll(10, TimeUnit.SECONDS);
    assertThat(h).as("a handshake within 10 s").isNotNull();
    return h;
  }

  /** Drops the handshakes recorded so far. */
  void forgetHandshakes() {
    handshakes.clear();
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private static final class Answer extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final SslHandler ssl;

    Answer(SslHandler ssl) {
      this.ssl = ssl;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      byte[] body = ("ok " + ssl.applicationProtocol()).getBytes(StandardCharsets.US_ASCII);
      FullHttpResponse response =
          new DefaultFullHttpResponse(
              HttpVersion.HTTP_1_1, HttpResponseStatus.OK, Unpooled.wrappedBuffer(body));
      response.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.length);
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close(); // a failed handshake: recorded by the handshake listener
    }
  }
}
