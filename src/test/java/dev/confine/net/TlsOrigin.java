package dev.confine.net;

import dev.confine.net.tls.CertificateAuthority;
import dev.confine.net.tls.MitmContexts;
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
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.ssl.SniHandler;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * An HTTPS destination for the interception tests: Netty on 127.0.0.1 presenting leaves of its own
 * CA (not the proxy's) for the name the client sends as SNI, or for 127.0.0.1 when it sends none.
 * It writes its answers as raw bytes, so that it can also lie. Paths: {@code /hello} "hello",
 * {@code /echo} the request body, {@code /chunked} two chunks, {@code /sse} an event stream whose
 * second event waits for {@link #releaseStream()}, {@code /lie-long} declares 5 bytes and sends 10,
 * {@code /lie-short} declares 100, sends 5 and closes, {@code /close} answers and closes.
 */
final class TlsOrigin implements AutoCloseable {
  /** What the origin saw of a request. */
  record Seen(String method, String uri, HttpHeaders headers, String body, int remotePort) {}

  private final CertificateAuthority ca = CertificateAuthority.generate();
  private final MitmContexts contexts = new MitmContexts(ca);
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final CountDownLatch streamRelease = new CountDownLatch(1);
  private final Channel channel;

  TlsOrigin() throws InterruptedException {
    channel =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline()
                        .addLast(
                            new SniHandler(
                                name -> contexts.serverContext(name == null ? "127.0.0.1" : name)))
                        .addLast(new HttpRequestDecoder(), new HttpObjectAggregator(1 << 20))
                        .addLast(new Answer());
                  }
                })
            .bind("127.0.0.1", 0)
            .sync()
            .channel();
  }

  int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  /** The CA the origin's certificates chain to. */
  X509Certificate ca() {
    return ca.certificate();
  }

  String caPem() {
    return ca.pem();
  }

  List<Seen> seen() {
    return seen;
  }

  void releaseStream() {
    streamRelease.countDown();
  }

  @Override
  public void close() {
    streamRelease.countDown();
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private final class Answer extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest r) {
      String body = r.content().toString(StandardCharsets.UTF_8);
      seen.add(
          new Seen(
              r.method().name(),
              r.uri(),
              r.headers().copy(),
              body,
              ((InetSocketAddress) ctx.channel().remoteAddress()).getPort()));
      String path = r.uri().replaceAll("\\?.*", "");
      switch (path) {
        case "/echo" -> send(ctx, "200 OK", "", body);
        case "/chunked" ->
            raw(
                ctx,
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nfirst\r\n6\r\nsecond\r\n0\r\n\r\n");
        case "/sse" -> {
          raw(
              ctx,
              "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                  + "Transfer-Encoding: chunked\r\n\r\n"
                  + chunk("data: first\n\n"));
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      streamRelease.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                    raw(ctx, chunk("data: second\n\n") + "0\r\n\r\n");
                  });
        }
        case "/lie-long" -> raw(ctx, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA");
        case "/lie-short" ->
            ctx.writeAndFlush(bytes("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"))
                .addListener(ChannelFutureListener.CLOSE);
        case "/close" ->
            ctx.writeAndFlush(
                    bytes("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbye"))
                .addListener(ChannelFutureListener.CLOSE);
        default -> send(ctx, "200 OK", "X-Origin: yes\r\n", "hello");
      }
    }

    private static String chunk(String data) {
      return Integer.toHexString(data.length()) + "\r\n" + data + "\r\n";
    }

    private static void send(
        ChannelHandlerContext ctx, String status, String headers, String body) {
      raw(
          ctx,
          "HTTP/1.1 "
              + status
              + "\r\nContent-Length: "
              + body.getBytes(StandardCharsets.UTF_8).length
              + "\r\n"
              + headers
              + "\r\n"
              + body);
    }

    private static void raw(ChannelHandlerContext ctx, String text) {
      ctx.writeAndFlush(bytes(text));
    }

    private static io.netty.buffer.ByteBuf bytes(String text) {
      return Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
