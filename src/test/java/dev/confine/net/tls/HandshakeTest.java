package dev.confine.net.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Future;
import java.net.InetSocketAddress;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Real TLS handshakes on 127.0.0.1 between a Netty server presenting {@link
 * MitmContexts#serverContext} and JDK or Netty clients, as a child meets the proxy and as the proxy
 * meets the real host.
 */
class HandshakeTest {
  private static final CertificateAuthority CA = CertificateAuthority.generate();
  private static final MitmContexts CONTEXTS = new MitmContexts(CA);
  private static TestTlsServer localhost;
  private static EventLoopGroup clients;

  @BeforeAll
  static void start() throws Exception {
    localhost = new TestTlsServer(CONTEXTS.serverContext("localhost"));
    clients = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  }

  @AfterAll
  static void stop() {
    if (localhost != null) {
      localhost.close();
    }
    if (clients != null) {
      clients.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  @BeforeEach
  void forgetEarlierHandshakes() {
    localhost.forgetHandshakes();
  }

  @Test
  void aClientTrustingOnlyTheCaAcceptsTheLeafForLocalhost() throws Exception {
    try (SSLSocket s =
        JdkClients.handshake(
            JdkClients.trustingOnly(CA.certificate()), "localhost", localhost.port(), null)) {
      assertThat(s.getSession().getProtocol()).isEqualTo("TLSv1.3");
      assertThat(s.getSession().getPeerCertificates())
          .containsExactly(CONTEXTS.leaf("localhost").chain().toArray(new X509Certificate[0]));
    }
    assertThat(localhost.nextHandshake().failure()).isNull();
  }

  @Test
  void aClientExpectingAnotherNameRefusesTheLeaf() throws Exception {
    SSLContext trusting = JdkClients.trustingOnly(CA.certificate());
    assertThatThrownBy(
            () -> JdkClients.handshake(trusting, "other.example", localhost.port(), null))
        .isInstanceOf(SSLHandshakeException.class)
        .hasMessageContaining("other.example");
    localhost.nextHandshake();
  }

  @Test
  void aClientTrustingTheSystemRootsRefusesTheLeaf() throws Exception {
    assertThatThrownBy(
            () ->
                JdkClients.handshake(SSLContext.getDefault(), "localhost", localhost.port(), null))
        .isInstanceOf(SSLHandshakeException.class)
        .hasMessageContaining("PKIX path building failed");
    assertThat(localhost.nextHandshake().failure()).isNotNull();
  }

  @Test
  void anIpLiteralsLeafPassesTheClientsIpCheck() throws Exception {
    try (TestTlsServer ip = new TestTlsServer(CONTEXTS.serverContext("127.0.0.1"));
        SSLSocket s =
            JdkClients.handshake(
                JdkClients.trustingOnly(CA.certificate()), "127.0.0.1", ip.port(), null)) {
      assertThat(s.getSession().getPeerPrincipal().getName()).isEqualTo("CN=127.0.0.1");
    }
  }

  @Test
  void aClientOfferingH2GetsH2() throws Exception {
    try (SSLSocket s =
        JdkClients.handshake(
            JdkClients.trustingOnly(CA.certificate()),
            "localhost",
            localhost.port(),
            null,
            "h2",
            "http/1.1")) {
      assertThat(s.getApplicationProtocol()).isEqualTo("h2");
    }
    assertThat(localhost.nextHandshake().alpn()).isEqualTo("h2");
  }

  @Test
  void aClientOfferingOnlyHttp11GetsHttp11() throws Exception {
    try (SSLSocket s =
        JdkClients.handshake(
            JdkClients.trustingOnly(CA.certificate()),
            "localhost",
            localhost.port(),
            null,
            "http/1.1")) {
      assertThat(s.getApplicationProtocol()).isEqualTo("http/1.1");
    }
    assertThat(localhost.nextHandshake().alpn()).isEqualTo("http/1.1");
  }

  @Test
  void aClientOfferingNoAlpnGetsNone() throws Exception {
    try (SSLSocket s =
        JdkClients.handshake(
            JdkClients.trustingOnly(CA.certificate()), "localhost", localhost.port(), null)) {
      assertThat(s.getApplicationProtocol()).isEmpty();
    }
    assertThat(localhost.nextHandshake().alpn()).isNull();
  }

  @Test
  void aClientOfferingAProtocolTheServerLacksStillConnects() throws Exception {
    try (SSLSocket s =
        JdkClients.handshake(
            JdkClients.trustingOnly(CA.certificate()),
            "localhost",
            localhost.port(),
            null,
            "spdy/3")) {
      assertThat(s.getApplicationProtocol()).isEmpty();
    }
    assertThat(localhost.nextHandshake().failure()).isNull();
  }

  @Test
  void aTls12OnlyClientIsServed() throws Exception {
    try (SSLSocket s =
        JdkClients.handshake(
            JdkClients.trustingOnly(CA.certificate()),
            "localhost",
            localhost.port(),
            new String[] {"TLSv1.2"})) {
      assertThat(s.getSession().getProtocol()).isEqualTo("TLSv1.2");
    }
    assertThat(localhost.nextHandshake().protocol()).isEqualTo("TLSv1.2");
  }

  @Test
  void theProxysClientContextTrustingTheCaConnectsAndOffersHttp11Only() throws Exception {
    SslContext client = MitmContexts.clientContext(List.of(CA.certificate()));
    try (NettyClient c =
        netty(ch -> client.newHandler(ch.alloc(), "localhost", localhost.port()))) {
      assertThat(c.handshakeFailure()).isNull();
      assertThat(c.ssl().applicationProtocol()).isEqualTo("http/1.1");
    }
    assertThat(localhost.nextHandshake().alpn()).isEqualTo("http/1.1");
  }

  @Test
  void theProxysClientContextChecksTheHostName() throws Exception {
    SslContext client = MitmContexts.clientContext(List.of(CA.certificate()));
    try (NettyClient c =
        netty(ch -> client.newHandler(ch.alloc(), "other.example", localhost.port()))) {
      assertThat(c.handshakeFailure())
          .isInstanceOf(SSLHandshakeException.class)
          .hasMessageContaining("other.example");
    }
    localhost.nextHandshake();
  }

  @Test
  void theProxysClientContextWithoutAHostRefusesEveryPeer() throws Exception {
    SslContext client = MitmContexts.clientContext(List.of(CA.certificate()));
    try (NettyClient c = netty(ch -> client.newHandler(ch.alloc()))) {
      assertThat(c.handshakeFailure()).isInstanceOf(SSLHandshakeException.class);
    }
    localhost.nextHandshake();
  }

  @Test
  void theProxysDefaultClientContextRefusesTheCa() throws Exception {
    SslContext client = MitmContexts.clientContext();
    try (NettyClient c =
        netty(ch -> client.newHandler(ch.alloc(), "localhost", localhost.port()))) {
      assertThat(c.handshakeFailure())
          .isInstanceOf(SSLHandshakeException.class)
          .hasMessageContaining("PKIX path building failed");
    }
    localhost.nextHandshake();
  }

  /** A Netty client connection to the localhost server, with its TLS handler. */
  private record NettyClient(Channel channel, SslHandler ssl) implements AutoCloseable {
    /** Why the handshake failed (waiting for it at most 10 s), or null when it succeeded. */
    Throwable handshakeFailure() throws InterruptedException {
      Future<Channel> handshake = ssl.handshakeFuture();
      assertThat(handshake.await(10, TimeUnit.SECONDS)).as("handshake done within 10 s").isTrue();
      return handshake.cause();
    }

    @Override
    public void close() {
      channel.close().syncUninterruptibly();
    }
  }

  /** Connects a Netty client to the localhost server, its TLS handler made by {@code handler}. */
  private static NettyClient netty(Function<SocketChannel, SslHandler> handler)
      throws InterruptedException {
    AtomicReference<SslHandler> made = new AtomicReference<>();
    Channel ch =
        new Bootstrap()
            .group(clients)
            .channel(NioSocketChannel.class)
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel c) {
                    SslHandler ssl = handler.apply(c);
                    made.set(ssl);
                    c.pipeline()
                        .addLast(ssl)
                        .addLast(
                            new ChannelInboundHandlerAdapter() {
                              @Override
                              public void exceptionCaught(ChannelHandlerContext ctx, Throwable e) {
                                ctx.close(); // a failed handshake: the test reads it from ssl
                              }
                            });
                  }
                })
            .connect(new InetSocketAddress("127.0.0.1", localhost.port()))
            .sync()
            .channel();
    return new NettyClient(ch, made.get());
  }
}
