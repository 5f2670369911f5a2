package dev.confine.bench;

import com.sun.net.httpserver.HttpServer;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.Runner;
import dev.confine.confined.ConfinedRunner;
import dev.confine.local.LocalRunner;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Confined children through the egress proxy (issue 19), as root: {@code curl} of a small file (100
 * bytes) and of a large one (64 MiB, through a CONNECT tunnel) from a loopback origin, by a {@link
 * LocalRunner} child straight to the origin and by a {@link ConfinedRunner} child under {@code
 * ALLOW_LIST} through the proxy in its namespace, each size's two sides interleaved (the order
 * alternating every iteration) so that the machine's load hits both alike. Reports each side's mean
 * and median wall time per exec and the ratios: the whole exec's wall time confined / direct for
 * the small file (target ≤ 1.2x) and the large file's throughput confined / direct (to compare with
 * the proxy's own tunnel / direct figure).
 *
 * <p>With {@code --rootless} the confined side is rootless: its connects go through the connect
 * supervisor instead of a namespace.
 *
 * <p>Usage: {@code ConfinedNetProfile [--iterations N] [--rootless] [--warmup-connections N] [--out
 * confined-net-profile.json]}.
 */
public final class ConfinedNetProfile {
  private static final int WARMUP = 20;
  private static final int LARGE = 64 << 20;
  private static final List<String> NAMES =
      List.of("smallDirect", "smallConfined", "largeDirect", "largeConfined");

  private ConfinedNetProfile() {}

  public static void main(String[] args) throws Exception {
    int iterations = 100;
    boolean rootless = false;
    int warmup = 3000;
    Path out = Path.of("target/bench/confined-net-profile.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--rootless" -> rootless = true;
        case "--warmup-connections" -> warmup = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    // Without TCP_NODELAY the JDK's server sends the head and the body in two segments, and the
    // second waits for the client's delayed ACK: ~20 ms added to every direct exchange, which made
    // an earlier baseline slower than the proxied path.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    ExecutorService originThreads = Executors.newFixedThreadPool(4);
    HttpServer origin = origin(originThreads);
    int port = origin.getAddress().getPort();
    Path root = Files.createTempDirectory("confine-net-profile");
    String small = "http://127.0.0.1:" + port + "/small";
    String large = "http://127.0.0.1:" + port + "/large";
    ExecOptions allow =
        ExecOptions.builder().net(NetPolicy.allowList(NetRule.allow("127.0.0.1", port))).build();
    try (ConfinedRunner confined =
        ConfinedRunner.builder(root.toString()).rootless(rootless).build()) {
      Runner local = LocalRunner.create(root.toString());
      Runner[] runners = {local, confined, local, confined};
      ExecOptions[] options = {null, allow, null, allow};
      List<List<String>> argv =
          List.of(curl(small, false), curl(small, false), curl(large, false), curl(large, true));
      // A long-lived JVM's proxy is compiled; a fresh one interprets its first thousands of
      // connections (~3 ms added to a new connection then, ~0.5 ms warm). Both sides make
      // `warmup` new connections first, plain and through a CONNECT tunnel, in one curl each.
      if (warmup > 0) {
        for (int k = 0; k < 2; k++) {
          for (boolean tunnel : new boolean[] {false, true}) {
            List<String> many = new ArrayList<>(List.of("-sS", "-o", "/dev/null"));
            many.addAll(List.of("-H", "Connection: close"));
            if (tunnel) {
              many.add("--proxytunnel");
            }
            for (int n = 0; n < warmup; n++) {
              many.add(small);
            }
            Checks.exitedZero(runners[k].exec("curl", many, options[k]).exitCode());
          }
        }
      }
      long[][] nanos = new long[runners.length][iterations];
      // The small files first, then the large ones, each pair interleaved: mixed in one loop, the
      // direct small exec took ~20 ms after the large transfers against ~7 ms alone.
      for (int pair = 0; pair < 2; pair++) {
        for (int i = -WARMUP; i < iterations; i++) {
          for (int j = 0; j < 2; j++) {
            int k = 2 * pair + Math.floorMod(i + j, 2);
            long t0 = System.nanoTime();
            ExecResult r = runners[k].exec("curl", argv.get(k), options[k]);
            long t = System.nanoTime() - t0;
            Checks.exitedZero(r.exitCode());
            long expected = k < 2 ? 100 : LARGE;
            String size = r.stdoutText().strip();
            if (!size.equals(String.valueOf(expected))) {
              throw new IllegalStateException(
                  NAMES.get(k) + " downloaded " + size + " bytes: " + r.stderrText());
            }
            if (i >= 0) {
              nanos[k][i] = t;
            }
          }
        }
      }
      StringBuilder json = new StringBuilder("{\"iterations\":").append(iterations);
      json.append(",\"way\":\"").append(rootless ? "supervised" : "namespace").append('"');
      json.append(",\"warmupConnections\":").append(warmup);
      json.append(",\"execs\":{");
      double[] means = InterleavedTimes.summarize(json, NAMES, nanos, 14);
      double smallRatio = means[1] / means[0];
      double largeThroughput = means[2] / means[3];
      json.append(
          String.format(
              Locale.ROOT,
              "},\"smallWallConfinedOverDirect\":%.3f,\"smallAddedUs\":%.1f,"
                  + "\"largeThroughputConfinedOverDirect\":%.3f}",
              smallRatio,
              means[1] - means[0],
              largeThroughput));
      System.out.printf(
          Locale.ROOT,
          "small file: confined / direct wall %.2fx (+%.1f ms); 64 MiB: confined / direct"
              + " throughput %.2fx%n",
          smallRatio,
          (means[1] - means[0]) / 1000,
          largeThroughput);
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, json + "\n", StandardCharsets.UTF_8);
    } finally {
      origin.stop(0);
      originThreads.shutdownNow();
      Files.delete(root);
    }
  }

  /** curl printing only the size it downloaded; {@code tunnel}: through a CONNECT tunnel. */
  private static List<String> curl(String url, boolean tunnel) {
    return tunnel
        ? List.of("-sS", "--proxytunnel", "-o", "/dev/null", "-w", "%{size_download}", url)
        : List.of("-sS", "-o", "/dev/null", "-w", "%{size_download}", url);
  }

  private static HttpServer origin(ExecutorService threads) throws IOException {
    byte[] small = new byte[100];
    byte[] chunk = new byte[1 << 20];
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    server.setExecutor(threads);
    server.createContext(
        "/small",
        ex -> {
          ex.sendResponseHeaders(200, small.length);
          ex.getResponseBody().write(small);
          ex.close();
        });
    server.createContext(
        "/large",
        ex -> {
          ex.sendResponseHeaders(200, LARGE);
          try (OutputStream body = ex.getResponseBody()) {
            for (int sent = 0; sent < LARGE; sent += chunk.length) {
              body.write(chunk);
            }
          }
          ex.close();
        });
    server.start();
    return server;
  }
}
