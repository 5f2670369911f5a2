package dev.confine.bench;

import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.net.EgressProxy;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * N idle CONNECT tunnels through one egress proxy at once (10,000 by default), to a loopback sink
 * that accepts and holds every connection without a byte either way. A plain main, run by {@code
 * scripts/bench --proxy}: what it measures is a state, not an operation.
 *
 * <p>The proxy runs in a JVM of its own (this class with {@code --proxy-process}), started by this
 * one, so that its heap, threads and descriptors are its own: the clients' and the sink's sockets
 * (plain blocking NIO channels) live in this JVM. At three points (before: the proxy started and a
 * few tunnels opened and closed, so that its event loops run; open: all N open and idle for a
 * second; after: all closed and the proxy's descriptors back) the proxy's JVM reports, after full
 * GCs until its used heap stops shrinking: its platform threads (JVM-wide, by kind, and the peak
 * since "before"), the OS's thread count for the process, the used heap, the direct memory Netty
 * holds, its open descriptors and RSS. Per tunnel = (open − before) / N.
 *
 * <p>Each tunnel costs the proxy two descriptors (the client's connection and its own to the sink)
 * and this JVM two (the client's socket and the sink's accepted one): N is capped at what the hard
 * descriptor limit allows both processes ({@code (limit - 256) / 2}), and the report says when it
 * was. The sink listens on 127.0.0.2 so that the proxy's outbound connections and the clients' use
 * different address pairs.
 *
 * <p>Usage: {@code IdleTunnelsReport [--tunnels N] [--out tunnels-idle.json]}.
 */
public final class IdleTunnelsReport {
  private static final int WARM_UP = 16;
  private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private IdleTunnelsReport() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--proxy-process")) {
      proxyProcess(args[1], Integer.parseInt(args[2]));
      return;
    }
    int requested = 10_000;
    Path out = Path.of("target/bench/tunnels-idle.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--tunnels" -> requested = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    long limit = hardFdLimit();
    int n = (int) Math.min(requested, (limit - 256) / 2);
    if (n < requested) {
      System.out.printf(
          "idle tunnels: %,d asked, %,d run: the hard descriptor limit is %,d and each tunnel"
              + " takes 2 in the proxy's process (and 2 in this one)%n",
          requested, n, limit);
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("requested", requested);
    json.put("tunnels", n);
    json.put("fdHardLimit", limit);
    json.put("cpus", Runtime.getRuntime().availableProcessors());
    json.put("loadBefore", CapsReport.loadAverage());

    InetAddress sinkHost = InetAddress.getByName("127.0.0.2");
    List<SocketChannel> accepted = Collections.synchronizedList(new ArrayList<>());
    try (ServerSocketChannel sink = ServerSocketChannel.open()) {
      sink.bind(new InetSocketAddress(sinkHost, 0), 4096);
      Thread.ofPlatform()
          .daemon()
          .start(
              () -> {
                try {
                  while (true) {
                    accepted.add(sink.accept());
                  }
                } catch (IOException e) {
                  // closed
                }
              });
      int sinkPort = ((InetSocketAddress) sink.getLocalAddress()).getPort();
      Path java = Path.of(System.getProperty("java.home"), "bin", "java");
      Process proxy =
          new ProcessBuilder(
                  java.toString(),
                  "--enable-native-access=ALL-UNNAMED",
                  "-cp",
                  System.getProperty("java.class.path"),
                  IdleTunnelsReport.class.getName(),
                  "--proxy-process",
                  sinkHost.getHostAddress(),
                  Integer.toString(sinkPort))
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      try (BufferedReader from =
              new BufferedReader(
                  new InputStreamReader(proxy.getInputStream(), StandardCharsets.UTF_8));
          PrintStream to =
              new PrintStream(proxy.getOutputStream(), true, StandardCharsets.US_ASCII)) {
        String first = from.readLine();
        if (first == null || !first.startsWith("listening ")) {
          throw new IllegalStateException("the proxy's process did not start: " + first);
        }
        InetSocketAddress proxyAddress =
            new InetSocketAddress(
                InetAddress.getLoopbackAddress(), Integer.parseInt(first.substring(10).strip()));
        String target = sinkHost.getHostAddress() + ":" + sinkPort;

        List<SocketChannel> warm = new ArrayList<>();
        for (int i = 0; i < WARM_UP; i++) {
          warm.add(open(proxyAddress, target));
        }
        for (int i = 0; i < 200 && accepted.size() < WARM_UP; i++) {
          Thread.sleep(10);
        }
        closeAll(warm);
        closeAll(accepted);
        Map<String, String> before = settled(to, from, -1);
        to.println("reset-peak");
        from.readLine();

        List<SocketChannel> clients = new ArrayList<>(n);
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
          clients.add(open(proxyAddress, target));
        }
        long openNanos = System.nanoTime() - t0;
        Thread.sleep(1000);
        int sinkConnections = accepted.size();
        Map<String, String> open = ask(to, from, "measure");
        int stillOpen = 0;
        for (SocketChannel c : clients) {
          stillOpen += c.isOpen() && c.isConnected() ? 1 : 0;
        }
        long t1 = System.nanoTime();
        closeAll(clients);
        closeAll(accepted);
        long closeNanos = System.nanoTime() - t1;
        Map<String, String> after = settled(to, from, num(before, "fds"));
        to.println("quit");
        proxy.waitFor();

        json.put("openMs", openNanos / 1e6);
        json.put("closeMs", closeNanos / 1e6);
        json.put("sinkConnections", sinkConnections);
        json.put("clientsOpen", stillOpen);
        json.put("before", typed(before));
        json.put("open", typed(open));
        json.put("after", typed(after));
        json.put("heapBytesPerTunnel", (num(open, "heap") - num(before, "heap")) / (double) n);
        json.put(
            "directBytesPerTunnel", (num(open, "direct") - num(before, "direct")) / (double) n);
        json.put("fdsPerTunnel", (num(open, "fds") - num(before, "fds")) / (double) n);
        json.put("rssBytesPerTunnel", (num(open, "rss") - num(before, "rss")) / (double) n);
        json.put("loadAfter", CapsReport.loadAverage());
      } finally {
        proxy.destroy();
      }
    }
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, CapsReport.Json.write(json) + "\n", StandardCharsets.UTF_8);
    System.out.println(CapsReport.Json.write(json));
    System.out.println("idle tunnels report written to " + out);
  }

  /** A tunnel through the proxy: CONNECT, the 200 read, then left idle. */
  private static SocketChannel open(InetSocketAddress proxy, String target) throws IOException {
    SocketChannel c = SocketChannel.open(proxy);
    c.write(
        ByteBuffer.wrap(
            ("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII)));
    ByteBuffer b = ByteBuffer.allocate(256);
    int state = 0;
    while (state < 4) {
      if (!b.hasRemaining() || c.read(b) < 0) {
        throw new IOException("the proxy closed or answered too much: " + text(b));
      }
      state = 0;
      for (int i = b.position() - 1; i >= 0 && state < 4; i--) {
        byte x = b.get(i);
        if ((state % 2 == 0 && x == '\n') || (state % 2 == 1 && x == '\r')) {
          state++;
        } else {
          break;
        }
      }
    }
    if (!text(b).startsWith("HTTP/1.1 200")) {
      throw new IOException("the proxy refused the tunnel: " + text(b).strip());
    }
    return c;
  }

  private static String text(ByteBuffer b) {
    return new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII);
  }

  private static void closeAll(List<SocketChannel> channels) throws IOException {
    synchronized (channels) {
      for (SocketChannel c : channels) {
        c.close();
      }
      channels.clear();
    }
  }

  /**
   * Measures until the proxy's descriptors are back at {@code fds} (any, when negative) and its
   * thread count has stopped changing, at most 20 s.
   */
  private static Map<String, String> settled(PrintStream to, BufferedReader from, long fds)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    Map<String, String> last = ask(to, from, "measure");
    while (System.nanoTime() < deadline) {
      Thread.sleep(250);
      Map<String, String> next = ask(to, from, "measure");
      boolean fdsBack = fds < 0 || num(next, "fds") <= fds;
      if (fdsBack && num(next, "threads") == num(last, "threads")) {
        return next;
      }
      last = next;
    }
    return last;
  }

  private static Map<String, String> ask(PrintStream to, BufferedReader from, String command)
      throws IOException {
    to.println(command);
    String line = from.readLine();
    if (line == null) {
      throw new IllegalStateException("the proxy's process ended");
    }
    Map<String, String> m = new LinkedHashMap<>();
    for (String pair : line.strip().split(" ")) {
      int eq = pair.indexOf('=');
      m.put(pair.substring(0, eq), pair.substring(eq + 1));
    }
    return m;
  }

  private static long num(Map<String, String> m, String key) {
    return Long.parseLong(m.get(key));
  }

  private static Map<String, Object> typed(Map<String, String> m) {
    Map<String, Object> t = new LinkedHashMap<>();
    m.forEach(
        (k, v) -> {
          if (k.equals("kinds")) {
            Map<String, Object> kinds = new LinkedHashMap<>();
            for (String kv : v.split(",")) {
              int c = kv.indexOf(':');
              if (c > 0) {
                kinds.put(kv.substring(0, c), Long.parseLong(kv.substring(c + 1)));
              }
            }
            t.put(k, kinds);
          } else {
            t.put(k, Long.parseLong(v));
          }
        });
    return t;
  }

  // ---- the proxy's process ----

  /**
   * Starts the proxy (loopback, no token, the sink allowed), prints {@code listening PORT}, then
   * answers {@code measure} with one line of {@code key=value} pairs, {@code reset-peak} with
   * {@code ok}, and ends on {@code quit} or end of input.
   */
  private static void proxyProcess(String sinkHost, int sinkPort) throws Exception {
    try (EgressProxy proxy =
        EgressProxy.builder(NetPolicy.allowList(NetRule.allow(sinkHost, sinkPort)))
            .listenOnLoopback()
            .requireToken(false)
            .start()) {
      System.out.println("listening " + proxy.address().orElseThrow().getPort());
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
      for (String line; (line = in.readLine()) != null && !line.equals("quit"); ) {
        if (line.equals("reset-peak")) {
          THREADS.resetPeakThreadCount();
          System.out.println("ok");
        } else {
          System.out.println(snapshot());
        }
      }
    }
  }

  private static String snapshot() throws IOException, InterruptedException {
    long heap = settledHeap();
    StringBuilder kinds = new StringBuilder();
    ThreadCounts.breakdown()
        .forEach(
            (k, v) -> kinds.append(kinds.isEmpty() ? "" : ",").append(k).append(':').append(v));
    return "threads="
        + THREADS.getThreadCount()
        + " peakThreads="
        + THREADS.getPeakThreadCount()
        + " osThreads="
        + status("Threads:")
        + " heap="
        + heap
        + " direct="
        + io.netty.util.internal.PlatformDependent.usedDirectMemory()
        + " fds="
        + openFds()
        + " rss="
        + status("VmRSS:") * 1024
        + " kinds="
        + kinds;
  }

  /** Full GCs until the used heap stops shrinking (by less than 64 KiB), at most 10. */
  private static long settledHeap() throws InterruptedException {
    long last = Long.MAX_VALUE;
    for (int i = 0; i < 10; i++) {
      System.gc();
      Thread.sleep(50);
      long used = MEMORY.getHeapMemoryUsage().getUsed();
      if (i > 0 && last - used < 64 * 1024) {
        return Math.min(last, used);
      }
      last = used;
    }
    return last;
  }

  private static int openFds() throws IOException {
    int n = 0;
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
      for (Path ignored : fds) {
        n++;
      }
    }
    return n - 1; // the directory stream's own fd
  }

  private static long status(String field) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith(field)) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }

  private static long hardFdLimit() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
      if (line.startsWith("Max open files")) {
        String[] f = line.substring("Max open files".length()).trim().split("\\s+");
        return f[1].equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(f[1]);
      }
    }
    return 1024;
  }
}
