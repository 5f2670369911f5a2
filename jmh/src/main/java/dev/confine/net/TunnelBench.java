package dev.confine.net;

import dev.confine.NetPolicy;
import dev.confine.NetRule;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * CONNECT tunnel throughput over loopback: 256 MiB per operation written by a client to a sink that
 * acknowledges the last byte, directly (the baseline) and through the egress proxy on each
 * transport. Throughput = 256 MiB / the time per operation.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 8, time = 2)
@Fork(1)
public class TunnelBench {
  @Param({"EPOLL", "NIO"})
  public String transport;

  private BenchTunnel tunnel;
  private EgressProxy proxy;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    tunnel = new BenchTunnel();
    proxy =
        EgressProxy.builder(NetPolicy.allowList(NetRule.allow("127.0.0.1", tunnel.port())))
            .listenOnLoopback()
            .requireToken(false)
            .transport(Transport.valueOf(transport))
            .start();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    proxy.close();
    tunnel.close();
  }

  @Benchmark
  public int direct() throws IOException {
    return tunnel.direct();
  }

  @Benchmark
  public int throughTheProxy() throws IOException {
    return tunnel.through(proxy.address().orElseThrow());
  }
}
