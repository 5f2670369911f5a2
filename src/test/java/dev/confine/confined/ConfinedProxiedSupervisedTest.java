package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Capability.Dimension;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetAction;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.linux.confinement.ConnectSupervisor;
import dev.confine.net.ProxyAuditListener;
import dev.confine.net.ProxyDecision;
import dev.confine.net.ProxyProtocol;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.LocalSshd;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
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

  /**
   * Transparent mode: a client that ignores the proxy variables is still sent through the proxy and
   * decided there: by its address (an IP rule) when it says no name, by the name it sends (HTTP
   * Host, TLS SNI) when it does, which then wins over the address; a refusal resets the connection.
   * The supervisor counted each connect it routed.
   */
  @Test
  void connectionsThatIgnoreTheProxyAreDecidedByAddressAndName() throws Exception {
    BlockingQueue<ProxyDecision> decisions = new LinkedBlockingQueue<>();
    ConfinedRunner audited =
        builder()
            .proxyAudit(
                new ProxyAuditListener() {
                  @Override
                  public void decided(ProxyDecision d) {
                    decisions.add(d);
                  }
                })
            .build();
    try {
      long routed = ConnectSupervisor.counts()[0];
      ExecResult ok =
          audited.exec(
              "curl",
              List.of("-sS", "--noproxy", "*", "--max-time", "10", url("/t")),
              allowOrigin());
      assertThat(ok.stdoutText()).as(ok.stderrText()).isEqualTo("hello /t");
      assertThat(ConnectSupervisor.counts()[0]).isGreaterThan(routed);
      ProxyDecision d = decisions.poll(5, TimeUnit.SECONDS);
      assertThat(d.protocol()).isEqualTo(ProxyProtocol.TRANSPARENT);
      assertThat(d.action()).isEqualTo(NetAction.ALLOW);
      assertThat(d.host()).isEqualTo("127.0.0.1");
      assertThat(d.port()).isEqualTo(port);

      int other = port == 65535 ? 1 : port + 1;
      ExecResult denied =
          audited.exec(
              "curl",
              List.of("-sS", "--noproxy", "*", "--max-time", "10", "http://127.0.0.1:" + other),
              allowOrigin());
      assertThat(denied.exitCode()).as(denied.stderrText()).isIn(52, 56); // empty reply, reset
      d = decisions.poll(5, TimeUnit.SECONDS);
      assertThat(d.action()).isEqualTo(NetAction.DENY);
      assertThat(d.port()).isEqualTo(other);

      // The allowed address, but a Host that no rule allows: the name wins.
      ExecResult named =
          audited.exec(
              "curl",
              List.of(
                  "-sS",
                  "--noproxy",
                  "*",
                  "--max-time",
                  "10",
                  "-H",
                  "Host: blocked.test",
                  url("/")),
              allowOrigin());
      assertThat(named.exitCode()).as(named.stderrText()).isIn(52, 56);
      d = decisions.poll(5, TimeUnit.SECONDS);
      assertThat(d.host()).isEqualTo("blocked.test");
      assertThat(d.action()).isEqualTo(NetAction.DENY);

      // TLS: the ClientHello's server name is what is decided.
      ExecResult tls =
          audited.exec(
              "curl",
              List.of(
                  "-sS",
                  "-k",
                  "--noproxy",
                  "*",
                  "--max-time",
                  "10",
                  "--resolve",
                  "sni.test:" + port + ":127.0.0.1",
                  "https://sni.test:" + port + "/"),
              allowOrigin());
      assertThat(tls.exitCode()).isNotZero();
      d = decisions.poll(5, TimeUnit.SECONDS);
      assertThat(d.protocol()).isEqualTo(ProxyProtocol.TRANSPARENT);
      assertThat(d.host()).isEqualTo("sni.test");
      assertThat(d.action()).isEqualTo(NetAction.DENY);
    } finally {
      audited.close();
    }
  }

  /**
   * A plain TCP client, and the JDK's HttpClient told to use no proxy, reach an allowed address and
   * are reset at a denied one.
   */
  @Test
  void programsThatIgnoreTheVariablesStillWork() throws Exception {
    int other = port == 65535 ? 1 : port + 1;
    String py =
        String.join(
            "\n",
            "import socket, sys",
            "for port in (" + port + ", " + other + "):",
            "    try:",
            "        s = socket.create_connection(('127.0.0.1', port), timeout=10)",
            "        s.sendall(b'GET /tcp HTTP/1.0\\r\\n\\r\\n')",
            "        data = s.makefile('rb').read()",
            "        print(data.split(b'\\r\\n\\r\\n', 1)[1].decode() if data else 'empty')",
            "    except OSError as e:",
            "        print('refused')");
    ExecResult tcp = runner.exec(ConfinedModes.PYTHON, List.of("-c", py), allowOrigin());
    assertThat(tcp.stdoutText())
        .as(tcp.stderrText())
        .isIn("hello /tcp\nrefused\n", "hello /tcp\nempty\n");

    Path source =
        Files.writeString(
            root.resolve("Direct.java"),
            """
            import java.net.*;
            import java.net.http.*;
            public class Direct {
              public static void main(String[] a) throws Exception {
                HttpClient c = HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY).build();
                for (String url : a) {
                  try {
                    System.out.println(c.send(HttpRequest.newBuilder(URI.create(url)).build(),
                        HttpResponse.BodyHandlers.ofString()).body());
                  } catch (java.io.IOException e) {
                    System.out.println("refused");
                  }
                }
              }
            }
            """);
    ExecResult jdk =
        runner.exec(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            List.of(source.toString(), url("/jdk"), "http://127.0.0.1:" + other + "/"),
            options(NetPolicy.allowList(NetRule.allow("127.0.0.1", port))));
    assertThat(jdk.stdoutText()).as(jdk.stderrText()).isEqualTo("hello /jdk\nrefused\n");
  }

  /**
   * DNS: the children's resolver asks over TCP (RES_OPTIONS=use-vc), the supervisor sends that to
   * the proxy, which answers allowed names with their checked addresses and refuses the rest
   * (without asking anyone, unless an IP rule needs their addresses checked); a connection to an
   * answered address is decided by the name.
   */
  @Test
  void theProxyAnswersTheChildrensDnsAllowedNamesOnly() throws Exception {
    List<String> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
    BlockingQueue<ProxyDecision> decisions = new LinkedBlockingQueue<>();
    ConfinedRunner dns =
        builder()
            .proxyResolver(
                host -> {
                  asked.add(host);
                  if (host.equals("origin.test")) {
                    return List.of(
                        InetAddress.getByAddress("origin.test", new byte[] {127, 0, 0, 1}));
                  }
                  throw new java.net.UnknownHostException(host);
                })
            .proxyAudit(
                new ProxyAuditListener() {
                  @Override
                  public void decided(ProxyDecision d) {
                    decisions.add(d);
                  }
                })
            .build();
    try {
      ExecOptions opts =
          options(
              NetPolicy.allowList(
                  NetRule.allow("origin.test", port),
                  NetRule.allow("127.0.0.1", port),
                  NetRule.allow("missing.test")));
      ExecResult r =
          dns.exec(
              "sh",
              List.of(
                  "-c",
                  "echo $RES_OPTIONS; getent ahostsv4 origin.test | head -1;"
                      + " getent hosts denied.test || echo denied $?;"
                      + " getent hosts missing.test || echo missing $?;"
                      + " curl -sS --noproxy '*' --max-time 10 http://origin.test:"
                      + port
                      + "/byname"),
              opts);
      assertThat(r.stdoutText())
          .as(r.stderrText())
          .isEqualTo(
              "use-vc\n127.0.0.1       STREAM origin.test\ndenied 2\nmissing 2\nhello /byname");
      assertThat(asked).contains("origin.test", "missing.test");
      // With an IP rule, a name no rule names is resolved to check its addresses (as for a
      // CONNECT); without one, a denied name is refused unasked.
      asked.clear();
      ExecResult unasked =
          dns.exec(
              "sh",
              List.of("-c", "getent hosts denied.test || echo denied $?"),
              options(NetPolicy.allowList(NetRule.allow("missing.test"))));
      assertThat(unasked.stdoutText()).isEqualTo("denied 2\n");
      assertThat(asked).isEmpty();
      List<ProxyDecision> seen = new java.util.ArrayList<>();
      decisions.drainTo(seen);
      assertThat(seen)
          .anySatisfy(
              d -> {
                assertThat(d.protocol()).isEqualTo(ProxyProtocol.DNS);
                assertThat(d.host()).isEqualTo("denied.test");
                assertThat(d.action()).isEqualTo(NetAction.DENY);
              })
          .anySatisfy(
              d -> {
                assertThat(d.protocol()).isEqualTo(ProxyProtocol.TRANSPARENT);
                assertThat(d.host()).isEqualTo("origin.test");
                assertThat(d.action()).isEqualTo(NetAction.ALLOW);
              });
    } finally {
      dns.close();
    }
  }

  /**
   * ssh, which knows no proxy variable, reaches an allowed sshd transparently (its key exchange
   * goes through: ssh-keyscan prints the server's host key) and nothing at a denied port.
   */
  @Test
  void sshReachesAnAllowedServerTransparently() {
    HostRequirements.requireProgram("ssh-keyscan");
    try (LocalSshd sshd = LocalSshd.start()) {
      int ssh = sshd.port();
      int other = ssh == 65535 ? 1 : ssh + 1;
      ExecResult r =
          runner.exec(
              "sh",
              List.of(
                  "-c",
                  "ssh-keyscan -T 10 -t ed25519 -p "
                      + ssh
                      + " 127.0.0.1 2>/dev/null; echo ---; ssh-keyscan -T 5 -p "
                      + other
                      + " 127.0.0.1 2>/dev/null; echo done"),
              options(NetPolicy.allowList(NetRule.allow("127.0.0.1", ssh))));
      String key = sshd.hostKey();
      assertThat(r.stdoutText())
          .as(r.stderrText() + sshd.logs())
          .isEqualTo("[127.0.0.1]:" + ssh + " " + key + "\n---\ndone\n");
      assertThat(sshd.sawConnection(Duration.ofSeconds(5))).as(sshd.logs()).isTrue();
    }
  }

  /**
   * Unix sockets: the children reach the ones they could have made (beneath a writable path) and
   * the listed ones, also by a relative path; not the host's others, not through a symbolic link in
   * their root to one, not abstract ones; datagram sockets, which send without a connect, are
   * refused.
   */
  @Test
  void unixSocketsAreTheChildrensOwnAndTheListedOnesOnly() throws Exception {
    HostRequirements.requireProgram("python3");
    Path outside = Files.createTempDirectory("confine-unix-");
    List<java.nio.channels.ServerSocketChannel> servers = new java.util.ArrayList<>();
    try {
      for (String name : List.of("listed", "unlisted")) {
        var server =
            java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX);
        server.bind(java.net.UnixDomainSocketAddress.of(outside.resolve(name + ".sock")));
        servers.add(server);
        Thread.ofPlatform()
            .daemon()
            .start(
                () -> {
                  while (server.isOpen()) {
                    try (var c = server.accept()) {
                      c.write(java.nio.ByteBuffer.wrap(name.getBytes(StandardCharsets.UTF_8)));
                    } catch (IOException e) {
                      return;
                    }
                  }
                });
      }
      Path listed = outside.resolve("listed.sock");
      Files.createSymbolicLink(root.resolve("link.sock"), outside.resolve("unlisted.sock"));
      String relative = root.relativize(listed).toString();
      Path script =
          Files.writeString(
              root.resolve("unix.py"),
              String.join(
                  "\n",
                  "import socket, sys",
                  "for path in sys.argv[1:]:",
                  "    try:",
                  "        s = socket.socket(socket.AF_UNIX)",
                  "        s.connect(path.replace('@', '\\0'))",
                  "        print(s.recv(20).decode())",
                  "    except OSError as e:",
                  "        print(e.errno)",
                  "try:",
                  "    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
                  "    print('dgram')",
                  "except OSError as e:",
                  "    print('dgram', e.errno)",
                  ""));
      NetPolicy policy =
          NetPolicy.builder()
              .mode(dev.confine.NetMode.ALLOW_LIST)
              .rules(List.of(NetRule.allow("127.0.0.1", port)))
              .unixSockets(List.of(listed.toString()))
              .build();
      ExecResult r =
          runner.exec(
              ConfinedModes.PYTHON,
              List.of(
                  script.toString(),
                  listed.toString(),
                  relative,
                  outside.resolve("unlisted.sock").toString(),
                  root.resolve("link.sock").toString(),
                  "@abstract-" + port),
              options(policy));
      assertThat(r.stdoutText())
          .as(r.stderrText())
          .isEqualTo("listed\nlisted\n13\n13\n13\ndgram 13\n");
    } finally {
      for (var server : servers) {
        server.close();
      }
      try (var paths = Files.walk(outside)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Node's fetch, which ignores the proxy variables, is decided the same way. */
  @Test
  void nodesFetchIsDecidedTransparently() {
    HostRequirements.requireProgram("node");
    int other = port == 65535 ? 1 : port + 1;
    String js =
        "(async () => { for (const u of process.argv.slice(1)) {"
            + " try { console.log(await (await fetch(u)).text()); }"
            + " catch (e) { console.log('refused'); } } })()";
    ExecResult node =
        runner.exec(
            "node",
            List.of("-e", js, url("/node"), "http://127.0.0.1:" + other + "/"),
            allowOrigin());
    assertThat(node.stdoutText()).as(node.stderrText()).isEqualTo("hello /node\nrefused\n");
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
      ExecResult r =
          runner.exec(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              List.of(
                  "--enable-native-access=ALL-UNNAMED",
                  script.toString(),
                  String.valueOf(port),
                  String.valueOf(victim.getLocalPort()),
                  "10000"),
              ExecOptions.builder()
                  .timeout(Duration.ofSeconds(120))
                  .net(NetPolicy.allowList(NetRule.allow("127.0.0.1", port)))
                  .build());
      String[] counts = r.stdoutText().strip().split(" ");
      assertThat(counts).as(r.stderrText()).hasSize(4);
      // Every TCP connect is the supervisor's, to the proxy (transparent mode), which decides the
      // address the supervisor copied: none can name the victim's port behind the check.
      assertThat(Integer.parseInt(counts[1])).as("a peer at the victim's port").isZero();
      assertThat(Integer.parseInt(counts[0])).as("connected to the proxy").isPositive();
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
            t("unixdgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
            t("unixpair", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
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
                "unixdgram 13",
                "unixpair 13",
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
