package dev.confine.bench;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.confined.ConfinedRunner;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The time the connect supervisor adds to one TCP connect of a rootless confined child (issue 19,
 * target ≤ 50 us median). A JVM child calls libc's {@code socket}, {@code connect} and {@code
 * close} through FFM in a loop and times each connect alone: under the host's network (no
 * supervisor) to a plain loopback listener, and under {@code ALLOW_LIST} to the egress proxy's
 * listener, which the supervisor connects on its behalf. Rounds of both children alternate, so the
 * machine's drift hits both; each child warms up before its timed connects. Reports the median and
 * the interquartile range of each side and the median added per connect.
 *
 * <p>Usage: {@code SupervisedConnectProfile [--rounds N] [--connects N] [--out FILE.json]}.
 */
public final class SupervisedConnectProfile {
  private SupervisedConnectProfile() {}

  private static final String CHILD =
      """
      import static java.lang.foreign.ValueLayout.*;
      import java.lang.foreign.*;
      import java.lang.invoke.MethodHandle;

      public class ConnectLoop {
        static final Linker L = Linker.nativeLinker();

        static MethodHandle fn(String name, MemoryLayout ret, MemoryLayout... args) {
          return L.downcallHandle(
              L.defaultLookup().find(name).orElseThrow(), FunctionDescriptor.of(ret, args));
        }

        public static void main(String[] a) throws Throwable {
          MethodHandle socket = fn("socket", JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT);
          MethodHandle connect = fn("connect", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
          MethodHandle close = fn("close", JAVA_INT, JAVA_INT);
          int port = Integer.parseInt(a[0]), warmup = Integer.parseInt(a[1]);
          int n = Integer.parseInt(a[2]);
          MemorySegment sa = Arena.global().allocate(16, 8);
          sa.set(JAVA_SHORT, 0, (short) 2);
          sa.set(JAVA_SHORT.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 2, (short) port);
          sa.set(JAVA_INT, 4, 0x0100007f);
          StringBuilder out = new StringBuilder();
          for (int i = -warmup; i < n; i++) {
            int fd = (int) socket.invokeExact(2, 1, 0);
            long t0 = System.nanoTime();
            int r = (int) connect.invokeExact(fd, sa, 16);
            long t = System.nanoTime() - t0;
            int c = (int) close.invokeExact(fd);
            if (r != 0) {
              throw new IllegalStateException("connect failed at " + i);
            }
            if (i >= 0) {
              out.append(t).append(' ');
            }
          }
          System.out.println(out.toString().strip());
        }
      }
      """;

  public static void main(String[] args) throws Exception {
    int rounds = 10;
    int connects = 1000;
    Path out = Path.of("target/bench/supervised-connect-profile.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--connects" -> connects = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path root = Files.createTempDirectory("confine-connect-profile");
    Path child = Files.writeString(root.resolve("ConnectLoop.java"), CHILD);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    try (ServerSocket plain = new ServerSocket(0, 4096, InetAddress.getLoopbackAddress());
        ConfinedRunner runner = ConfinedRunner.builder(root.toString()).rootless(true).build()) {
      Thread acceptor = Thread.ofPlatform().daemon().start(() -> drain(plain));
      ExecOptions allow =
          ExecOptions.builder().net(NetPolicy.allowList(NetRule.allow("127.0.0.1", 1))).build();
      String proxyPort =
          runner.exec("sh", List.of("-c", "echo ${HTTP_PROXY##*:}"), allow).stdoutText().strip();
      List<Long> direct = new ArrayList<>();
      List<Long> supervised = new ArrayList<>();
      String warmup = String.valueOf(Math.max(200, connects / 5));
      for (int round = 0; round < rounds; round++) {
        for (int side = 0; side < 2; side++) {
          boolean sup = (side + round) % 2 == 1;
          List<String> argv =
              List.of(
                  "--enable-native-access=ALL-UNNAMED",
                  "-XX:+UseSerialGC",
                  child.toString(),
                  sup ? proxyPort : String.valueOf(plain.getLocalPort()),
                  warmup,
                  String.valueOf(connects));
          ExecResult r = runner.exec(java, argv, sup ? allow : ExecOptions.builder().build());
          Checks.exitedZero(r.exitCode());
          for (String t : r.stdoutText().strip().split(" ")) {
            (sup ? supervised : direct).add(Long.parseLong(t));
          }
        }
      }
      plain.close();
      acceptor.join(2000);
      double[] d = quartiles(direct);
      double[] s = quartiles(supervised);
      String json =
          String.format(
              Locale.ROOT,
              "{\"rounds\":%d,\"connectsPerRound\":%d,"
                  + "\"direct\":{\"p25Us\":%.1f,\"medianUs\":%.1f,\"p75Us\":%.1f},"
                  + "\"supervised\":{\"p25Us\":%.1f,\"medianUs\":%.1f,\"p75Us\":%.1f},"
                  + "\"addedMedianUs\":%.1f}",
              rounds,
              connects,
              d[0],
              d[1],
              d[2],
              s[0],
              s[1],
              s[2],
              s[1] - d[1]);
      System.out.printf(
          Locale.ROOT,
          "connect: direct median %.1f us [%.1f, %.1f], supervised median %.1f us [%.1f, %.1f];"
              + " added %.1f us per connect%n",
          d[1],
          d[0],
          d[2],
          s[1],
          s[0],
          s[2],
          s[1] - d[1]);
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, json + "\n", StandardCharsets.UTF_8);
    } finally {
      Files.deleteIfExists(child);
      Files.deleteIfExists(root);
    }
  }

  private static void drain(ServerSocket server) {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        s.close();
      } catch (IOException e) {
        return;
      }
    }
  }

  /** p25, median and p75, in microseconds. */
  private static double[] quartiles(List<Long> nanos) {
    long[] n = nanos.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(n);
    return new double[] {
      n[n.length / 4] / 1000.0, n[n.length / 2] / 1000.0, n[3 * n.length / 4] / 1000.0
    };
  }
}
