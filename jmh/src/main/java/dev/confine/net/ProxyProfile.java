package dev.confine.net;

import dev.confine.NetPolicy;
import dev.confine.NetRule;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The proxy benchmarks' sides interleaved in one JVM, so that the machine's load (on a shared
 * 2-core VM it comes and goes within seconds) hits all of them alike: direct to the origin and the
 * sink (the baseline), the egress proxy on epoll and on NIO, and, when {@code scripts/bench} names
 * the installed package, sandbox-runtime's proxy as srt runs it ({@code srt}) and its HTTP server
 * alone ({@code srtHttp}). Each round runs every side in turn (the order rotating by one each
 * round) through the same three measurements as the JMH benchmarks: {@value #LATENCY} requests on
 * one kept-alive blocking connection, each timed ({@link HttpProxyBench#oneClient}); one round of
 * {@value HttpProxyBench#PER_CONNECTION} requests on each of {@value HttpProxyBench#CLIENTS}
 * kept-alive connections ({@link HttpProxyBench#clients64}); one 256 MiB CONNECT tunnel ({@link
 * TunnelBench}). The first {@value #WARM_UP} rounds are not kept.
 *
 * <p>Usage: {@code ProxyProfile [--rounds N] [--out proxy-profile.json]}. Writes, per side, every
 * kept round's time of the 64 clients and of the tunnel, each round's median latency, and the
 * latency percentiles over all kept requests.
 */
public final class ProxyProfile {
  private static final int LATENCY = 300;
  private static final int WARM_UP = 3;

  private ProxyProfile() {}

  /**
   * One way to reach the origin and the sink. Its connections are made anew at each of its turns
   * (outside the timed parts): srt's HTTP server closes a connection idle for 5 s, as long as the
   * other sides' turns can take.
   */
  private record Side(
      String name,
      InetSocketAddress to,
      byte[] request,
      InetSocketAddress tunnelVia,
      List<Long> latencies,
      List<Double> roundP50s,
      List<Long> clientsNanos,
      List<Long> tunnelNanos) {
    Side(String name, InetSocketAddress to, byte[] request, InetSocketAddress tunnelVia) {
      this(
          name,
          to,
          request,
          tunnelVia,
          new ArrayList<>(),
          new ArrayList<>(),
          new ArrayList<>(),
          new ArrayList<>());
    }
  }

  public static void main(String[] args) throws Exception {
    int rounds = 20;
    Path out = Path.of("target/bench/proxy-profile.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    List<AutoCloseable> open = new ArrayList<>();
    try (BenchHttp.Origin origin = new BenchHttp.Origin();
        BenchTunnel tunnel = new BenchTunnel()) {
      List<Side> sides = new ArrayList<>();
      InetSocketAddress originAddress =
          new InetSocketAddress(InetAddress.getLoopbackAddress(), origin.port());
      byte[] absolute = BenchHttp.absoluteForm(origin.port());
      sides.add(new Side("direct", originAddress, BenchHttp.originForm(origin.port()), null));
      for (Transport t : Transport.values()) {
        if (t == Transport.EPOLL && Transport.epollUnavailability().isPresent()) {
          continue;
        }
        EgressProxy proxy =
            EgressProxy.builder(
                    NetPolicy.allowList(
                        NetRule.allow("127.0.0.1", origin.port()),
                        NetRule.allow("127.0.0.1", tunnel.port())))
                .listenOnLoopback()
                .requireToken(false)
                .transport(t)
                .start();
        open.add(proxy);
        InetSocketAddress a = proxy.address().orElseThrow();
        String name =
            "confine" + t.name().charAt(0) + t.name().substring(1).toLowerCase(Locale.ROOT);
        sides.add(new Side(name, a, absolute, a));
      }
      if (SrtProxy.configured()) {
        for (String mode : new String[] {"mux", "http"}) {
          SrtProxy srt = new SrtProxy(mode);
          open.add(srt);
          sides.add(
              new Side(
                  mode.equals("mux") ? "srt" : "srtHttp", srt.address(), absolute, srt.address()));
        }
      } else {
        System.out.println("proxy profile: srt is not installed; its sides are left out");
      }

      for (int r = 0; r < WARM_UP + rounds; r++) {
        boolean kept = r >= WARM_UP;
        for (int k = 0; k < sides.size(); k++) {
          Side s = sides.get((k + r) % sides.size());
          long[] lat = new long[LATENCY];
          try (BenchHttp.OneClient one = new BenchHttp.OneClient(s.to(), s.request())) {
            one.exchange();
            for (int i = 0; i < LATENCY; i++) {
              long t0 = System.nanoTime();
              one.exchange();
              lat[i] = System.nanoTime() - t0;
            }
          }
          long clients;
          try (BenchHttp.ManyClients many =
              new BenchHttp.ManyClients(s.to(), s.request(), HttpProxyBench.CLIENTS)) {
            many.round(1);
            long t0 = System.nanoTime();
            many.round(HttpProxyBench.PER_CONNECTION);
            clients = System.nanoTime() - t0;
          }
          if (kept) {
            for (long x : lat) {
              s.latencies().add(x);
            }
            Arrays.sort(lat);
            s.roundP50s().add(lat[LATENCY / 2] / 1e3);
            s.clientsNanos().add(clients);
          }
        }
        // The tunnels in a pass of their own: a side's tunnel right after its own 64 clients
        // measured, for srt, its clean-up of that burst as much as its relay.
        for (int k = 0; k < sides.size(); k++) {
          Side s = sides.get((k + r) % sides.size());
          long t1 = System.nanoTime();
          int ack = s.tunnelVia() == null ? tunnel.direct() : tunnel.through(s.tunnelVia());
          long tunnelNanos = System.nanoTime() - t1;
          if (ack != 1) {
            throw new IllegalStateException(s.name() + ": the sink did not acknowledge");
          }
          if (kept) {
            s.tunnelNanos().add(tunnelNanos);
          }
        }
        if (kept) {
          System.out.printf("proxy profile: round %d of %d%n", r - WARM_UP + 1, rounds);
        }
      }

      Map<String, Object> json = new LinkedHashMap<>();
      json.put("rounds", rounds);
      json.put("cpus", Runtime.getRuntime().availableProcessors());
      json.put("latencyRequestsPerRound", LATENCY);
      json.put("clients", HttpProxyBench.CLIENTS);
      json.put("requestsPerClientsRound", HttpProxyBench.CLIENTS * HttpProxyBench.PER_CONNECTION);
      json.put("tunnelBytes", BenchTunnel.BYTES);
      Map<String, Object> bySide = new LinkedHashMap<>();
      for (Side s : sides) {
        long[] all = s.latencies().stream().mapToLong(Long::longValue).sorted().toArray();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("latencyP50Us", all[all.length / 2] / 1e3);
        m.put("latencyP90Us", all[(int) (all.length * 0.90)] / 1e3);
        m.put("latencyP99Us", all[(int) (all.length * 0.99)] / 1e3);
        m.put("roundP50sUs", s.roundP50s());
        m.put("clientsNanos", s.clientsNanos());
        m.put("tunnelNanos", s.tunnelNanos());
        bySide.put(s.name(), m);
        System.out.printf(
            Locale.ROOT,
            "  %-13s latency p50 %7.1f us, p90 %7.1f, p99 %7.1f; 64 clients %8.0f req/s;"
                + " tunnel %6.0f MiB/s%n",
            s.name(),
            all[all.length / 2] / 1e3,
            all[(int) (all.length * 0.90)] / 1e3,
            all[(int) (all.length * 0.99)] / 1e3,
            HttpProxyBench.CLIENTS
                * HttpProxyBench.PER_CONNECTION
                * s.clientsNanos().size()
                / (sum(s.clientsNanos()) / 1e9),
            (BenchTunnel.BYTES >> 20) * s.tunnelNanos().size() / (sum(s.tunnelNanos()) / 1e9));
      }
      json.put("sides", bySide);
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, Json.write(json) + "\n", StandardCharsets.UTF_8);
      System.out.println("proxy profile written to " + out);
    } finally {
      for (int i = open.size() - 1; i >= 0; i--) {
        open.get(i).close();
      }
    }
  }

  private static double sum(List<Long> xs) {
    return xs.stream().mapToLong(Long::longValue).sum();
  }

  /** Just enough JSON for maps, lists of numbers and numbers. */
  private static final class Json {
    private Json() {}

    static String write(Object o) {
      return switch (o) {
        case Map<?, ?> m -> {
          StringBuilder sb = new StringBuilder("{");
          for (var e : m.entrySet()) {
            if (sb.length() > 1) {
              sb.append(',');
            }
            sb.append('"').append(e.getKey()).append("\":").append(write(e.getValue()));
          }
          yield sb.append('}').toString();
        }
        case List<?> l -> {
          StringBuilder sb = new StringBuilder("[");
          for (Object x : l) {
            if (sb.length() > 1) {
              sb.append(',');
            }
            sb.append(write(x));
          }
          yield sb.append(']').toString();
        }
        case Double d -> String.format(Locale.ROOT, "%.3f", d);
        default -> String.valueOf(o);
      };
    }
  }
}
