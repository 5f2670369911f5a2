package dev.confine.net.tls;

import static dev.confine.net.tls.CertificateAuthorityTest.FIXED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MitmContextsTest {
  private static final CertificateAuthority CA = CertificateAuthority.generate(FIXED);

  @Test
  void aHostsLeafAndContextAreMadeOnceAndKept() {
    MitmContexts contexts = new MitmContexts(CA);
    Leaf leaf = contexts.leaf("example.com");
    SslContext context = contexts.serverContext("example.com");
    assertThat(contexts.leaf("example.com")).isSameAs(leaf);
    assertThat(contexts.serverContext("example.com")).isSameAs(context);
    assertThat(leaf.certificate().getSubjectX500Principal().getName()).isEqualTo("CN=example.com");
    assertThat(contexts.keptHosts()).isEqualTo(1);
  }

  @Test
  void differentHostsGetDifferentLeavesAndKeys() {
    MitmContexts contexts = new MitmContexts(CA);
    Leaf a = contexts.leaf("a.example");
    Leaf b = contexts.leaf("b.example");
    assertThat(a.key()).isNotEqualTo(b.key());
    assertThat(contexts.serverContext("a.example"))
        .isNotSameAs(contexts.serverContext("b.example"));
  }

  @Test
  void theHostStringIsKeptExactly() {
    MitmContexts contexts = new MitmContexts(CA);
    assertThat(contexts.leaf("Example.com")).isNotSameAs(contexts.leaf("example.com"));
    assertThat(contexts.leaf("Example.com").certificate().getSubjectX500Principal().getName())
        .isEqualTo("CN=Example.com");
  }

  @Test
  void theLeastRecentlyUsedHostGoesFirst() {
    MitmContexts contexts = new MitmContexts(CA, 2);
    Leaf a = contexts.leaf("a.example");
    Leaf b = contexts.leaf("b.example");
    contexts.leaf("a.example"); // a is now the more recent
    contexts.leaf("c.example"); // b goes
    assertThat(contexts.keptHosts()).isEqualTo(2);
    assertThat(contexts.leaf("a.example")).isSameAs(a);
    assertThat(contexts.leaf("b.example")).isNotSameAs(b);
  }

  @Test
  void byDefault4096HostsAreKept() {
    assertThat(MitmContexts.DEFAULT_MAX_HOSTS).isEqualTo(4096);
  }

  @Test
  void anExpiredLeafIsReplacedOnItsNextUse() {
    MutableClock clock = new MutableClock(CertificateAuthorityTest.NOW);
    MitmContexts contexts = new MitmContexts(CertificateAuthority.generate(clock));
    Leaf first = contexts.leaf("example.com");
    clock.advance(Duration.ofHours(22));
    assertThat(contexts.leaf("example.com")).as("still valid").isSameAs(first);
    clock.advance(Duration.ofHours(1));
    Leaf second = contexts.leaf("example.com");
    assertThat(second).isNotSameAs(first);
    assertThat(second.certificate().getNotAfter()).isAfter(first.certificate().getNotAfter());
  }

  @Test
  void threadsAskingForOneHostAtOnceGetOneLeaf() throws Exception {
    MitmContexts contexts = new MitmContexts(CA);
    int threads = 8;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      Callable<Leaf> ask =
          () -> {
            start.await();
            return contexts.leaf("same.example");
          };
      List<Future<Leaf>> asked =
          IntStream.range(0, threads).mapToObj(i -> pool.submit(ask)).toList();
      start.countDown();
      Leaf first = asked.getFirst().get();
      for (Future<Leaf> f : asked) {
        assertThat(f.get()).isSameAs(first);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void theServerContextSpeaksTls13And12AndOffersH2ThenHttp11() {
    SslContext context = new MitmContexts(CA).serverContext("example.com");
    assertThat(context.isServer()).isTrue();
    SSLEngine engine = context.newEngine(ByteBufAllocator.DEFAULT);
    assertThat(engine.getEnabledProtocols()).containsExactlyInAnyOrder("TLSv1.3", "TLSv1.2");
    assertThat(context.applicationProtocolNegotiator().protocols())
        .containsExactly("h2", "http/1.1");
  }

  @Test
  void theClientContextSpeaksTls13And12OffersHttp11AndVerifiesTheHostName() {
    for (SslContext context :
        List.of(
            MitmContexts.clientContext(), MitmContexts.clientContext(List.of(CA.certificate())))) {
      assertThat(context.isClient()).isTrue();
      SSLEngine engine = context.newEngine(ByteBufAllocator.DEFAULT, "example.com", 443);
      assertThat(engine.getEnabledProtocols()).containsExactlyInAnyOrder("TLSv1.3", "TLSv1.2");
      assertThat(engine.getSSLParameters().getEndpointIdentificationAlgorithm()).isEqualTo("HTTPS");
      assertThat(context.applicationProtocolNegotiator().protocols()).containsExactly("http/1.1");
    }
  }

  @Test
  void aClientContextTrustingNothingIsRefused() {
    assertThatThrownBy(() -> MitmContexts.clientContext(List.of()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "  "})
  void aBlankHostIsRefused(String host) {
    MitmContexts contexts = new MitmContexts(CA);
    assertThatThrownBy(() -> contexts.serverContext(host))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(contexts.keptHosts()).isZero();
  }
}
