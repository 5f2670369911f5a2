package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Capability.Dimension;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.linux.confinement.ConnectSupervisor;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * ALLOW_LIST and PROXY rootless (forced as root; as nobody in CI's second run): the children's own
 * TCP connects are refused and the connect supervisor makes the ones to the proxy for them.
 */
@Tag("confinement")
class ConfinedProxiedSupervisedTest extends ProxiedNetworkContract {
  @Override
  ConfinedRunner.Builder builder() {
    return ConfinedRunner.builder(root.toString()).rootless(true);
  }

  @Override
  void requireTheWay() {
    HostRequirements.require(ConnectSupervisor.availability());
  }

  /** The proxy's connection is the supervisor's doing; a direct one its refusal (EACCES). */
  @Test
  void theSupervisorRoutesTheProxysConnectionsAndRefusesTheRest() {
    long[] before = ConnectSupervisor.counts();
    ExecResult ok = sh("curl -sS --max-time 10 " + url("/s"), allowOrigin());
    assertThat(ok.stdoutText()).as(ok.stderrText()).isEqualTo("hello /s");
    long[] between = ConnectSupervisor.counts();
    assertThat(between[0]).isGreaterThan(before[0]);
    ExecResult direct = sh("curl -sS --noproxy '*' --max-time 5 " + url("/d"), allowOrigin());
    assertThat(direct.exitCode()).isEqualTo(7); // curl: couldn't connect
    assertThat(ConnectSupervisor.counts()[1]).isGreaterThan(between[1]);
    ExecResult py =
        runner.exec(
            ConfinedModes.PYTHON,
            List.of(
                "-c",
                "import socket\n"
                    + "try:\n"
                    + "  socket.create_connection(('127.0.0.1', "
                    + port
                    + "))\n"
                    + "except OSError as e:\n"
                    + "  print(e.errno, e.strerror)"),
            allowOrigin());
    assertThat(py.stdoutText()).as(py.stderrText()).isEqualTo("13 Permission denied\n");
  }

  /**
   * The connect race (a JVM child calling libc through FFM, so that its threads truly run at once):
   * one thread flips the port of the address another connects to, between the proxy's (allowed) and
   * a victim's (denied), 10,000 times; and a descriptor swapped between a unix and a TCP socket
   * while it connects to the victim (the supervisor lets a unix connect continue). The victim never
   * sees a connection; some connects reach the proxy (the race was live).
   */
  @Test
  void aConnectRaceNeverReachesADeniedPort() throws Exception {
    AtomicInteger accepted = new AtomicInteger();
    ServerSocket victim = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    try {
      Thread acceptor =
          Thread.ofPlatform()
              .daemon()
              .start(
                  () -> {
                    while (!victim.isClosed()) {
                      try {
                        Socket s = victim.accept();
                        accepted.incrementAndGet();
                        s.close();
                      } catch (IOException e) {
                        return;
                      }
                    }
                  });
      Path script = Files.writeString(root.resolve("Race.java"), RACE);
      ExecResult env = sh("echo $HTTP_PROXY", allowOrigin());
      String proxyPort = env.stdoutText().strip().replaceAll(".*:", "");
      ExecResult r =
          runner.exec(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              List.of(
                  "--enable-native-access=ALL-UNNAMED",
                  script.toString(),
                  proxyPort,
                  String.valueOf(victim.getLocalPort()),
                  "10000"),
              ExecOptions.builder()
                  .timeout(Duration.ofSeconds(120))
                  .net(NetPolicy.allowList(NetRule.allow("127.0.0.1", port)))
                  .build());
      String[] counts = r.stdoutText().strip().split(" ");
      assertThat(counts).as(r.stderrText()).hasSize(4);
      assertThat(Integer.parseInt(counts[1])).as("connected to the victim").isZero();
      assertThat(Integer.parseInt(counts[3])).as("swapped descriptor connected").isZero();
      assertThat(Integer.parseInt(counts[0])).as("reached the proxy").isPositive();
      assertThat(Integer.parseInt(counts[2])).as("refused").isPositive();
      victim.close();
      acceptor.join(5000);
      assertThat(accepted).hasValue(0);
    } finally {
      victim.close();
    }
  }

  private static final String RACE =
      """
      import static java.lang.foreign.ValueLayout.*;

      import java.lang.foreign.*;
      import java.lang.invoke.MethodHandle;

      public class Race {
        static final Linker L = Linker.nativeLinker();

        static MethodHandle fn(String name, MemoryLayout ret, MemoryLayout... args) {
          return L.downcallHandle(
              L.defaultLookup().find(name).orElseThrow(), FunctionDescriptor.of(ret, args));
        }

        static final MethodHandle SOCKET = fn("socket", JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT);
        static final MethodHandle CONNECT = fn("connect", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
        static final MethodHandle PEER = fn("getpeername", JAVA_INT, JAVA_INT, ADDRESS, ADDRESS);
        static final MethodHandle CLOSE = fn("close", JAVA_INT, JAVA_INT);
        static final MethodHandle DUP2 = fn("dup2", JAVA_INT, JAVA_INT, JAVA_INT);
        static final ValueLayout.OfShort BE = JAVA_SHORT.withOrder(java.nio.ByteOrder.BIG_ENDIAN);
        static volatile boolean stop;

        public static void main(String[] a) throws Throwable {
          short allowed = (short) Integer.parseInt(a[0]);
          short denied = (short) Integer.parseInt(a[1]);
          int tries = Integer.parseInt(a[2]);
          MemorySegment sa = Arena.global().allocate(16, 8);
          sa.set(JAVA_SHORT, 0, (short) 2);
          sa.set(JAVA_INT, 4, 0x0100007f); // 127.0.0.1
          Thread flipper =
              Thread.ofPlatform()
                  .start(
                      () -> {
                        for (int i = 0; !stop; i++) {
                          sa.set(BE, 2, (i & 1) == 0 ? allowed : denied);
                        }
                      });
          MemorySegment peer = Arena.global().allocate(16, 8);
          MemorySegment len = Arena.global().allocate(4, 4);
          int proxy = 0, reached = 0, failed = 0;
          for (int i = 0; i < tries; i++) {
            int fd = (int) SOCKET.invokeExact(2, 1, 0);
            if ((int) CONNECT.invokeExact(fd, sa, 16) == 0) {
              len.set(JAVA_INT, 0, 16);
              int r = (int) PEER.invokeExact(fd, peer, len);
              if (peer.get(BE, 2) == denied) {
                reached++;
              } else {
                proxy++;
              }
            } else {
              failed++;
            }
            int c = (int) CLOSE.invokeExact(fd);
          }
          stop = true;
          flipper.join();
          // A descriptor swapped between a unix and a TCP socket while it connects to the victim.
          stop = false;
          sa.set(BE, 2, denied);
          int unix = (int) SOCKET.invokeExact(1, 1, 0);
          int n = (int) SOCKET.invokeExact(2, 1, 0);
          Thread swapper =
              Thread.ofPlatform()
                  .start(
                      () -> {
                        try {
                          while (!stop) {
                            int tcp = (int) SOCKET.invokeExact(2, 1, 0);
                            int r = (int) DUP2.invokeExact(unix, n);
                            r = (int) DUP2.invokeExact(tcp, n);
                            r = (int) CLOSE.invokeExact(tcp);
                          }
                        } catch (Throwable t) {
                          throw new RuntimeException(t);
                        }
                      });
          int swapped = 0;
          for (int i = 0; i < tries; i++) {
            if ((int) CONNECT.invokeExact(n, sa, 16) == 0) {
              swapped++;
            }
          }
          stop = true;
          swapper.join();
          System.out.println(proxy + " " + reached + " " + failed + " " + swapped);
        }
      }
      """;

  /**
   * What else the children may not open or do: UDP, raw, SCTP, MPTCP, netlink and packet sockets,
   * TCP binds, listening on TCP (which binds to every address), TCP fast open. Unix sockets still
   * listen, connect and carry data.
   */
  @Test
  void otherSocketsBindsListensAndFastOpenAreRefused() throws IOException {
    HostRequirements.requireProgram("python3");
    Path script =
        Files.writeString(
            root.resolve("probe.py"),
            """
            import os, socket
            def t(name, f):
                try:
                    f(); print(name, "reached")
                except OSError as e:
                    print(name, e.errno)
            t("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
            t("udp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
            t("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, 1))
            t("sctp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132))
            t("mptcp", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM, 262))
            t("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
            t("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
            t("bind", lambda: socket.socket().bind(("127.0.0.1", 0)))
            t("listen", lambda: socket.socket().listen())
            t("listen6", lambda: socket.socket(socket.AF_INET6).listen())
            t("fastopen", lambda: socket.socket().sendto(b"x", 0x20000000, ("127.0.0.1", 9)))
            path = os.path.join(os.getcwd(), "u.sock")
            server = socket.socket(socket.AF_UNIX)
            server.bind(path)
            server.listen()
            client = socket.socket(socket.AF_UNIX)
            client.connect(path)
            client.sendall(b"unix ok")
            print(server.accept()[0].recv(10).decode())
            """);
    ExecResult r = runner.exec(ConfinedModes.PYTHON, List.of(script.toString()), allowOrigin());
    assertThat(r.stdoutText())
        .as(r.stderrText())
        .isEqualTo(
            String.join(
                "\n",
                "udp 13",
                "udp6 13",
                "raw 13",
                "sctp 13",
                "mptcp 13",
                "netlink 13",
                "packet 13",
                "bind 13",
                "listen 13",
                "listen6 13",
                "fastopen 95",
                "unix ok",
                ""));
  }

  @Test
  void theReportNamesTheSupervisor() {
    assertThat(runner.capabilities())
        .filteredOn(c -> c.dimension() == Dimension.NET_ALLOW_LIST)
        .singleElement()
        .satisfies(c -> assertThat(c.detail()).contains("connect supervisor"));
  }
}
