package dev.confine.net;

import dev.confine.MitmPolicy;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.net.tls.CertificateAuthority;
import dev.confine.net.tls.MitmContexts;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
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
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of TLS interception, with a JDK TLS client and a local Netty HTTPS origin (its own CA, a
 * wildcard leaf for {@code *.origin.test}) on loopback, in the same run:
 *
 * <ul>
 *   <li>{@code newHost*}: a fresh connection per operation, handshake and one GET: directly ({@link
 *       #newHostDirect}), and through an intercepted tunnel to a host name never used before
 *       ({@link #newHostIntercepted}: CONNECT, a fresh leaf, the client's and the proxy's
 *       handshakes);
 *   <li>{@code keptAlive*}: one GET per operation on a connection kept open: directly, and through
 *       an intercepted tunnel (HTTP/1.1 both sides).
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 6, time = 2)
@Fork(1)
public class MitmBench {
  private static final byte[] REQUEST =
      "GET /hello HTTP/1.1\r\nHost: origin.test\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private EventLoopGroup group;
  private Channel origin;
  private int port;
  private EgressProxy proxy;
  private SSLContext client;
  private SSLSocket directKept;
  private SSLSocket tunnelKept;
  private long hosts;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    CertificateAuthority originCa = CertificateAuthority.generate();
    var context = new MitmContexts(originCa).serverContext("*.origin.test");
    group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    origin =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline()
                        .addLast(context.newHandler(ch.alloc()))
                        .addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 16))
                        .addLast(new Hello());
                  }
                })
            .bind("127.0.0.1", 0)
            .sync()
            .channel();
    port = ((InetSocketAddress) origin.localAddress()).getPort();
    HostResolver resolver =
        host -> {
          if (host.endsWith(".origin.test")) {
            return List.of(InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1}));
          }
          throw new UnknownHostException(host);
        };
    proxy =
        EgressProxy.builder(
                NetPolicy.builder()
                    .mode(NetMode.ALLOW_LIST)
                    .rules(List.of(NetRule.allow("origin.test"), NetRule.allow("127.0.0.1", port)))
                    .mitm(MitmPolicy.all())
                    .build())
            .listenOnLoopback()
            .requireToken(false)
            .resolver(resolver)
            .outboundRoots(List.of(originCa.certificate()))
            .start();
    client = trusting(originCa.certificate(), proxyCa());
    directKept = direct("kept.origin.test");
    tunnelKept = tunnel("kept.origin.test");
  }

  private X509Certificate proxyCa() throws GeneralSecurityException {
    byte[] pem = proxy.caCertificatePem().orElseThrow().getBytes(StandardCharsets.US_ASCII);
    return (X509Certificate)
        CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(pem));
  }

  private static SSLContext trusting(X509Certificate... roots) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    for (int i = 0; i < roots.length; i++) {
      store.setCertificateEntry("ca" + i, roots[i]);
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(store);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, tmf.getTrustManagers(), null);
    return tls;
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    directKept.close();
    tunnelKept.close();
    proxy.close();
    origin.close().syncUninterruptibly();
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private SSLSocket direct(String host) throws IOException {
    Socket raw = new Socket();
    raw.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    return secure(raw, host);
  }

  private SSLSocket tunnel(String host) throws IOException {
    Socket raw = new Socket();
    raw.connect(proxy.address().orElseThrow());
    raw.getOutputStream()
        .write(
            ("CONNECT " + host + ":" + port + " HTTP/1.1\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
    InputStream in = raw.getInputStream();
    String head = readHead(in);
    if (!head.startsWith("HTTP/1.1 200")) {
      raw.close();
      throw new IOException("the proxy refused the tunnel: " + head);
    }
    return secure(raw, host);
  }

  private SSLSocket secure(Socket raw, String host) throws IOException {
    raw.setTcpNoDelay(true);
    SSLSocket s = (SSLSocket) client.getSocketFactory().createSocket(raw, host, port, true);
    var p = s.getSSLParameters();
    p.setEndpointIdentificationAlgorithm("HTTPS");
    p.setApplicationProtocols(new String[] {"http/1.1"});
    s.setSSLParameters(p);
    s.startHandshake();
    return s;
  }

  /** One GET on {@code s}: the body's length (5). */
  private static int get(SSLSocket s) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(REQUEST);
    out.flush();
    InputStream in = s.getInputStream();
    String head = readHead(in);
    int at = head.toLowerCase(java.util.Locale.ROOT).indexOf("content-length:");
    int length = Integer.parseInt(head.substring(at + 15, head.indexOf('\r', at)).strip());
    return in.readNBytes(length).length;
  }

  private static String readHead(InputStream in) throws IOException {
    StringBuilder b = new StringBuilder();
    int state = 0;
    while (state < 4) {
      int c = in.read();
      if (c < 0) {
        throw new IOException("closed after " + b);
      }
      b.append((char) c);
      state = (c == '\r' || c == '\n') ? state + 1 : 0;
    }
    return b.toString();
  }

  @Benchmark
  public int newHostDirect() throws IOException {
    try (SSLSocket s = direct("h" + hosts++ + ".origin.test")) {
      return get(s);
    }
  }

  @Benchmark
  public int newHostIntercepted() throws IOException {
    try (SSLSocket s = tunnel("h" + hosts++ + ".origin.test")) {
      return get(s);
    }
  }

  @Benchmark
  public int keptAliveDirect() throws IOException {
    return get(directKept);
  }

  @Benchmark
  public int keptAliveIntercepted() throws IOException {
    return get(tunnelKept);
  }

  /** Answers every request with "hello", keeping the connection alive. */
  private static final class Hello extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      var response =
          new DefaultFullHttpResponse(
              HttpVersion.HTTP_1_1,
              HttpResponseStatus.OK,
              Unpooled.copiedBuffer("hello", StandardCharsets.US_ASCII));
      response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 5);
      ctx.writeAndFlush(response);
    }
  }
}
