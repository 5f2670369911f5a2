package dev.confine.net;

import dev.confine.NetPolicy;
import dev.confine.NetRule;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
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
  static final long BYTES = 256L << 20;

  @Param({"EPOLL", "NIO"})
  public String transport;

  private ServerSocket sink;
  private Thread sinkThread;
  private EgressProxy proxy;
  private final byte[] chunk = new byte[64 * 1024];

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    sink = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    sinkThread = Thread.ofPlatform().daemon().start(this::serveSink);
    proxy =
        EgressProxy.builder(NetPolicy.allowList(NetRule.allow("127.0.0.1", sink.getLocalPort())))
            .listenOnLoopback()
            .requireToken(false)
            .transport(Transport.valueOf(transport))
            .start();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    proxy.close();
    sink.close();
  }

  private void serveSink() {
    while (!sink.isClosed()) {
      try {
        Socket s = sink.accept();
        Thread.ofPlatform().daemon().start(() -> drain(s));
      } catch (IOException e) {
        return;
      }
    }
  }

  private static void drain(Socket s) {
    byte[] buf = new byte[256 * 1024];
    try (s) {
      InputStream in = s.getInputStream();
      long total = 0;
      while (total < BYTES) {
        int n = in.read(buf);
        if (n < 0) {
          return;
        }
        total += n;
      }
      s.getOutputStream().write(1);
    } catch (IOException e) {
      // the client went away
    }
  }

  @Benchmark
  public int direct() throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), sink.getLocalPort()));
      return send(s);
    }
  }

  @Benchmark
  public int throughTheProxy() throws IOException {
    try (Socket s = new Socket()) {
      s.connect(proxy.address().orElseThrow());
      OutputStream out = s.getOutputStream();
      out.write(
          ("CONNECT 127.0.0.1:" + sink.getLocalPort() + " HTTP/1.1\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      InputStream in = s.getInputStream();
      int state = 0;
      while (state < 4) {
        int c = in.read();
        if (c < 0) {
          throw new IOException("the proxy closed the tunnel");
        }
        state = (c == '\r' || c == '\n') ? state + 1 : 0;
      }
      return send(s);
    }
  }

  private int send(Socket s) throws IOException {
    s.setTcpNoDelay(true);
    OutputStream out = s.getOutputStream();
    for (long sent = 0; sent < BYTES; sent += chunk.length) {
      out.write(chunk);
    }
    out.flush();
    return s.getInputStream().read();
  }
}
