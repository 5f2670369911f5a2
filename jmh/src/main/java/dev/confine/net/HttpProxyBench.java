package dev.confine.net;

import dev.confine.NetPolicy;
import dev.confine.NetRule;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Plain HTTP through the egress proxy, keep-alive, small responses: a loopback origin answering
 * each GET with 100 bytes (Content-Length), reached directly in origin form ({@code DIRECT}, the
 * baseline) or through the proxy in absolute form on each transport. {@code oneClient}: one
 * kept-alive blocking connection, request then response, sampled (p50/p90/p99; the proxy's added
 * latency is its p50 minus DIRECT's). {@code clients64}: 64 kept-alive connections driven by one
 * event loop thread, each sending its next request when its response is complete; the score is
 * requests per second.
 */
@State(Scope.Benchmark)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class HttpProxyBench {
  static final int CLIENTS = 64;
  static final int PER_CONNECTION = 16;

  @Param({"DIRECT", "EPOLL", "NIO"})
  public String path;

  private BenchHttp.Origin origin;
  private EgressProxy proxy;
  InetSocketAddress to;
  byte[] request;

  @Setup(Level.Trial)
  public void setUp() throws InterruptedException {
    origin = new BenchHttp.Origin();
    if (path.equals("DIRECT")) {
      to = new InetSocketAddress(InetAddress.getLoopbackAddress(), origin.port());
      request = BenchHttp.originForm(origin.port());
    } else {
      proxy =
          EgressProxy.builder(NetPolicy.allowList(NetRule.allow("127.0.0.1", origin.port())))
              .listenOnLoopback()
              .requireToken(false)
              .transport(Transport.valueOf(path))
              .start();
      to = proxy.address().orElseThrow();
      request = BenchHttp.absoluteForm(origin.port());
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    if (proxy != null) {
      proxy.close();
    }
    origin.close();
  }

  /** One kept-alive connection. */
  @State(Scope.Benchmark)
  public static class One {
    BenchHttp.OneClient client;

    @Setup(Level.Trial)
    public void setUp(HttpProxyBench b) throws IOException {
      client = new BenchHttp.OneClient(b.to, b.request);
      client.exchange();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
      client.close();
    }
  }

  /** 64 kept-alive connections on one event loop. */
  @State(Scope.Benchmark)
  public static class Many {
    BenchHttp.ManyClients clients;

    @Setup(Level.Trial)
    public void setUp(HttpProxyBench b) throws InterruptedException {
      clients = new BenchHttp.ManyClients(b.to, b.request, CLIENTS);
      clients.round(1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      clients.close();
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public int oneClient(One one) throws IOException {
    return one.client.exchange();
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(CLIENTS * PER_CONNECTION)
  public void clients64(Many many) throws InterruptedException {
    many.clients.round(PER_CONNECTION);
  }
}
