package dev.confine.net;

import dev.confine.NetPolicy;
import dev.confine.NetRule;
import java.io.IOException;
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
 * The egress proxy side by side with the proxy of Anthropic's sandbox-runtime ({@code srt}, Node),
 * in the same run: a 256 MiB CONNECT tunnel (as {@link TunnelBench}) and 64 kept-alive plain-HTTP
 * clients (as {@link HttpProxyBench#clients64}). {@code confine}: the egress proxy on its default
 * transport. {@code srt}: srt's proxy as its sandbox manager starts it (the single-port front-end
 * that pipes HTTP connections to its HTTP server on a unix socket), by {@code
 * jmh/peers/srt-proxy.mjs}; {@code srtHttp}: srt's HTTP server alone on a TCP port (no front-end
 * hop, its best case). Both allow 127.0.0.1 only. The srt sides need the system properties {@code
 * confine.bench.srtPackage} (the installed package's directory) and {@code confine.bench.srtScript}
 * (the script), which {@code scripts/bench} sets; without them run {@code -p proxy=confine}.
 */
@State(Scope.Benchmark)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class PeerProxyBench {
  @Param({"confine", "srt", "srtHttp"})
  public String proxy;

  private BenchHttp.Origin origin;
  private BenchTunnel tunnel;
  private EgressProxy confine;
  private SrtProxy srt;
  InetSocketAddress address;
  byte[] request;

  @Setup(Level.Trial)
  public void setUp() throws IOException, InterruptedException {
    origin = new BenchHttp.Origin();
    tunnel = new BenchTunnel();
    request = BenchHttp.absoluteForm(origin.port());
    if (proxy.equals("confine")) {
      confine =
          EgressProxy.builder(
                  NetPolicy.allowList(
                      NetRule.allow("127.0.0.1", origin.port()),
                      NetRule.allow("127.0.0.1", tunnel.port())))
              .listenOnLoopback()
              .requireToken(false)
              .start();
      address = confine.address().orElseThrow();
    } else {
      srt = new SrtProxy(proxy.equals("srt") ? "mux" : "http");
      address = srt.address();
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException, InterruptedException {
    if (confine != null) {
      confine.close();
    }
    if (srt != null) {
      srt.close();
    }
    tunnel.close();
    origin.close();
  }

  /** 64 kept-alive connections on one event loop. */
  @State(Scope.Benchmark)
  public static class Many {
    BenchHttp.ManyClients clients;

    @Setup(Level.Trial)
    public void setUp(PeerProxyBench b) throws InterruptedException {
      clients = new BenchHttp.ManyClients(b.address, b.request, HttpProxyBench.CLIENTS);
      clients.round(1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      clients.close();
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  public int tunnel() throws IOException {
    return tunnel.through(address);
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(HttpProxyBench.CLIENTS * HttpProxyBench.PER_CONNECTION)
  public void clients64(Many many) throws InterruptedException {
    many.clients.round(HttpProxyBench.PER_CONNECTION);
  }
}
