package dev.confine.net;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What the plain-HTTP proxy benchmarks share: a loopback origin that answers every request with the
 * same small response (Content-Length, keep-alive), the request bytes in origin form (to the
 * origin) and absolute form (to a proxy), a blocking one-connection client and a 64-connection
 * client on one event loop. The clients parse only what they must (the end of the head and its
 * Content-Length), so that their own cost stays small next to the proxy's.
 */
final class BenchHttp {
  /** The response body's size. */
  static final int BODY = 100;

  private BenchHttp() {}

  /** A GET in origin form, to send to the origin itself. */
  static byte[] originForm(int port) {
    return ("GET /small HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII);
  }

  /** The same GET in absolute form, to send to a proxy. */
  static byte[] absoluteForm(int port) {
    return ("GET http://127.0.0.1:"
            + port
            + "/small HTTP/1.1\r\nHost: 127.0.0.1:"
            + port
            + "\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * The origin: one event loop thread (epoll where it loads); every request head (the GETs carry no
   * body) is answered with a 200 of {@link #BODY} bytes, flushed once per read.
   */
  static final class Origin implements AutoCloseable {
    private static final byte[] RESPONSE = response();
    private final EventLoopGroup group;
    private final Channel listener;
    private final ByteBuf raw = Unpooled.directBuffer().writeBytes(RESPONSE);

    Origin() throws InterruptedException {
      Transport t = Transport.best();
      group =
          new MultiThreadIoEventLoopGroup(
              1, new DefaultThreadFactory("bench-origin", true), t.ioHandlers());
      ByteBuf response = Unpooled.unreleasableBuffer(raw);
      listener =
          new ServerBootstrap()
              .group(group)
              .channelFactory(t::tcpServer)
              .childOption(ChannelOption.TCP_NODELAY, true)
              .childHandler(
                  new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                      ch.pipeline().addLast(new Answering(response));
                    }
                  })
              .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
              .sync()
              .channel();
    }

    private static byte[] response() {
      byte[] head =
          ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + BODY + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII);
      byte[] all = Arrays.copyOf(head, head.length + BODY);
      Arrays.fill(all, head.length, all.length, (byte) 'x');
      return all;
    }

    int port() {
      return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    @Override
    public void close() {
      listener.close().awaitUninterruptibly();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
      raw.release();
    }

    /** Counts request heads (CR LF CR LF) and answers each. */
    private static final class Answering extends ChannelInboundHandlerAdapter {
      private final ByteBuf response;
      private int state;
      private boolean wrote;

      Answering(ByteBuf response) {
        this.response = response;
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
          for (int i = in.readerIndex(), end = in.writerIndex(); i < end; i++) {
            byte c = in.getByte(i);
            state =
                c == '\r'
                    ? (state == 0 || state == 2 ? state + 1 : 1)
                    : c == '\n' ? (state == 1 || state == 3 ? state + 1 : 0) : 0;
            if (state == 4) {
              state = 0;
              ctx.write(response.duplicate(), ctx.voidPromise());
              wrote = true;
            }
          }
        } finally {
          ReferenceCountUtil.release(in);
        }
      }

      @Override
      public void channelReadComplete(ChannelHandlerContext ctx) {
        if (wrote) {
          wrote = false;
          ctx.flush();
        }
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
      }
    }
  }

  /**
   * Reads one response of {@code in} into {@code buf}: up to the end of its head, then its
   * Content-Length of body. The response must fit in {@code buf}; returns its length.
   */
  static int readResponse(InputStream in, byte[] buf) throws IOException {
    int n = 0;
    int headEnd = -1;
    int need = Integer.MAX_VALUE;
    while (n < need) {
      int r = in.read(buf, n, buf.length - n);
      if (r < 0) {
        throw new IOException("closed after " + n + " bytes of a response");
      }
      n += r;
      if (headEnd < 0) {
        headEnd = headEnd(buf, n);
        if (headEnd >= 0) {
          need = headEnd + contentLength(buf, headEnd);
        }
      }
    }
    return n;
  }

  /** The index just past CR LF CR LF in {@code buf[0, n)}, or -1. */
  static int headEnd(byte[] buf, int n) {
    for (int i = 3; i < n; i++) {
      if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r') {
        return i + 1;
      }
    }
    return -1;
  }

  private static final byte[] CONTENT_LENGTH =
      "content-length:".getBytes(StandardCharsets.US_ASCII);

  /** The Content-Length in the head {@code buf[0, headEnd)}. */
  static int contentLength(byte[] buf, int headEnd) {
    outer:
    for (int i = 0; i + CONTENT_LENGTH.length < headEnd; i++) {
      for (int k = 0; k < CONTENT_LENGTH.length; k++) {
        if ((buf[i + k] | 0x20) != CONTENT_LENGTH[k]) {
          continue outer;
        }
      }
      int v = 0;
      for (int j = i + CONTENT_LENGTH.length; j < headEnd; j++) {
        byte c = buf[j];
        if (c >= '0' && c <= '9') {
          v = v * 10 + (c - '0');
        } else if (c != ' ') {
          break;
        }
      }
      return v;
    }
    throw new IllegalStateException("a response without Content-Length");
  }

  /** One kept-alive blocking connection: write the request, read the whole response. */
  static final class OneClient implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final byte[] request;
    private final byte[] buf = new byte[4096];

    OneClient(InetSocketAddress to, byte[] request) throws IOException {
      socket = new Socket();
      socket.setTcpNoDelay(true);
      socket.connect(to);
      out = socket.getOutputStream();
      in = socket.getInputStream();
      this.request = request;
    }

    /** One request and its response; returns the response's length. */
    int exchange() throws IOException {
      out.write(request);
      return readResponse(in, buf);
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  /**
   * N kept-alive connections driven by one event loop thread (epoll where it loads), each sending
   * its next request as soon as the last response is complete (a closed loop: N requests in
   * flight). One event loop for all N is cheaper per request than N blocking threads, whose context
   * switches on two cores would cost about as much as what is measured.
   */
  static final class ManyClients implements AutoCloseable {
    private final EventLoopGroup group;
    private final List<Channel> channels = new ArrayList<>();
    private final List<Conn> conns = new ArrayList<>();
    private final ByteBuf raw;

    ManyClients(InetSocketAddress to, byte[] request, int n) throws InterruptedException {
      Transport t = Transport.best();
      group =
          new MultiThreadIoEventLoopGroup(
              1, new DefaultThreadFactory("bench-clients", true), t.ioHandlers());
      raw = Unpooled.directBuffer().writeBytes(request);
      ByteBuf req = Unpooled.unreleasableBuffer(raw);
      Bootstrap b =
          new Bootstrap()
              .group(group)
              .channelFactory(t::tcpClient)
              .option(ChannelOption.TCP_NODELAY, true);
      for (int i = 0; i < n; i++) {
        Conn c = new Conn(req);
        conns.add(c);
        channels.add(b.handler(c).connect(to).sync().channel());
      }
    }

    /** Each connection sends {@code perConnection} requests one after the other; waits for all. */
    void round(int perConnection) throws InterruptedException {
      CountDownLatch done = new CountDownLatch(conns.size());
      for (int i = 0; i < conns.size(); i++) {
        Conn c = conns.get(i);
        Channel ch = channels.get(i);
        ch.eventLoop().execute(() -> c.start(ch, perConnection, done));
      }
      if (!done.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("responses missing after 60 s");
      }
      for (Conn c : conns) {
        if (c.failure != null) {
          throw new IllegalStateException(c.failure);
        }
      }
    }

    @Override
    public void close() {
      channels.forEach(Channel::close);
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
      raw.release();
    }

    /** One connection's state: counts the response bytes it still needs. */
    private static final class Conn extends ChannelInboundHandlerAdapter {
      private final ByteBuf request;
      private final byte[] head = new byte[2048];
      private int headLength;
      private int bodyLeft = -1;
      private int left;
      private CountDownLatch done;
      private volatile String failure;

      Conn(ByteBuf request) {
        this.request = request;
      }

      void start(Channel ch, int count, CountDownLatch done) {
        this.left = count;
        this.done = done;
        headLength = 0;
        bodyLeft = -1;
        ch.writeAndFlush(request.duplicate(), ch.voidPromise());
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
          while (in.isReadable()) {
            if (bodyLeft < 0) {
              int take = Math.min(in.readableBytes(), head.length - headLength);
              in.getBytes(in.readerIndex(), head, headLength, take);
              int end = headEnd(head, headLength + take);
              if (end < 0) {
                if (headLength + take == head.length) {
                  throw new IllegalStateException("response head over " + head.length + " B");
                }
                headLength += take;
                in.skipBytes(take);
                continue;
              }
              in.skipBytes(end - headLength);
              bodyLeft = contentLength(head, end);
              headLength = 0;
            }
            int take = Math.min(bodyLeft, in.readableBytes());
            in.skipBytes(take);
            bodyLeft -= take;
            if (bodyLeft == 0) {
              bodyLeft = -1;
              if (--left == 0) {
                done.countDown();
              } else {
                ctx.writeAndFlush(request.duplicate(), ctx.voidPromise());
              }
            }
          }
        } catch (RuntimeException e) {
          failure = String.valueOf(e);
          ctx.close();
        } finally {
          in.release();
        }
      }

      @Override
      public void channelInactive(ChannelHandlerContext ctx) {
        if (done != null && left > 0) {
          failure = "the connection closed with " + left + " requests to go";
          left = 0;
          done.countDown();
        }
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        failure = String.valueOf(cause);
        ctx.close();
      }
    }
  }
}
