package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.linux.confinement.ConfinementThreads.Network;
import dev.confine.linux.confinement.ConnectSupervisor;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.linux.confinement.ThreadNamespaces;
import dev.confine.local.LocalRunner;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The root path: {@code DENY_ALL} in a private network namespace with only loopback, and the
 * read-only host in a private mount namespace, with real programs; and the JVM's own threads
 * staying in the host's namespaces.
 */
@Tag("confinement")
@Tag("root")
class ConfinedNamespacesTest {
  @TempDir Path root;
  @TempDir Path outside;
  @TempDir Path writable;

  private static final ExecOptions DEFAULT =
      ExecOptions.builder().timeout(Duration.ofSeconds(30)).build();
  private static final ExecOptions DENY =
      ExecOptions.builder().timeout(Duration.ofSeconds(30)).net(NetPolicy.denyAll()).build();

  @BeforeEach
  void needsRootNamespaces() {
    HostRequirements.require(Landlock.availability());
    HostRequirements.require(SeccompFilter.availability());
    HostRequirements.require(ThreadNamespaces.networkAvailability());
    HostRequirements.require(ThreadNamespaces.mountAvailability());
  }

  private ConfinedRunner runner() {
    return ConfinedRunner.builder(root.toString()).writablePaths(writable.toString()).build();
  }

  private ConfinedRunner readOnlyHost() {
    return ConfinedRunner.builder(root.toString())
        .writablePaths(writable.toString())
        .readOnlyHost(true)
        .build();
  }

  private static ExecResult sh(ConfinedRunner runner, String script, ExecOptions options) {
    return runner.exec("sh", List.of("-c", script), options);
  }

  private static List<String> interfaces(String procNetDev) {
    return procNetDev
        .lines()
        .skip(2)
        .map(l -> l.substring(0, l.indexOf(':')).trim())
        .sorted()
        .toList();
  }

  private static String hostNetDev() throws IOException {
    return Files.readString(Path.of("/proc/thread-self/net/dev"));
  }

  @Test
  void denyAllAsRootShowsOnlyLoopbackUp() throws IOException {
    assertThat(runner().denyAllNetwork()).isEqualTo(Network.NAMESPACE);
    ExecResult dev = runner().exec("cat", List.of("/proc/net/dev"), DENY);
    assertThat(dev.exitCode()).as(dev.stderrText()).isZero();
    assertThat(interfaces(dev.stdoutText())).containsExactly("lo");
    // Without DENY_ALL the same runner's children see the host's interfaces.
    ExecResult host = runner().exec("cat", List.of("/proc/net/dev"), DEFAULT);
    assertThat(interfaces(host.stdoutText())).isEqualTo(interfaces(hostNetDev()));

    HostRequirements.requireProgram("ip");
    ExecResult ip = runner().exec("ip", List.of("-o", "link"), DENY);
    assertThat(ip.exitCode()).as(ip.stderrText()).isZero();
    assertThat(ip.stdoutText().lines().toList())
        .singleElement()
        .satisfies(l -> assertThat(l).contains(": lo: <LOOPBACK,UP,"));
    ExecResult addr = runner().exec("ip", List.of("-o", "-4", "addr"), DENY);
    assertThat(addr.stdoutText()).contains("inet 127.0.0.1/8").doesNotContain("eth");
  }

  @Test
  void theChildrenHaveTheirOwnNetworkNamespace() throws IOException {
    String jvm = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
    ExecResult inside = runner().exec("readlink", List.of("/proc/self/ns/net"), DENY);
    ExecResult outside = runner().exec("readlink", List.of("/proc/self/ns/net"), DEFAULT);
    assertThat(inside.stdoutText().strip()).startsWith("net:[").isNotEqualTo(jvm);
    assertThat(outside.stdoutText().strip()).isEqualTo(jvm);
  }

  /**
   * Loopback inside works in every form a connect takes (where the supervisor runs, it makes each
   * on the child's behalf, inside the namespace): TCP over IPv4 and IPv6, a non-blocking connect,
   * UDP, an IPv6 datagram socket given an IPv4 address, and a connect that dissolves a UDP socket's
   * association (AF_UNSPEC).
   */
  @Test
  void aLoopbackServerInsideWorks() {
    HostRequirements.requireProgram("python3");
    String script =
        String.join(
            "\n",
            "import errno, select, socket",
            "for fam, host in ((socket.AF_INET, '127.0.0.1'), (socket.AF_INET6, '::1')):",
            "    s = socket.socket(fam); s.bind((host, 0)); s.listen(2)",
            "    c = socket.create_connection(s.getsockname()[:2]); a, _ = s.accept()",
            "    c.sendall(b'ping'); print(fam.name, a.recv(4).decode())",
            "    n = socket.socket(fam); n.setblocking(False)",
            "    rc = n.connect_ex(s.getsockname()[:2])",
            "    select.select([], [n], [], 5); a2, _ = s.accept()",
            "    print('nonblocking', rc in (0, errno.EINPROGRESS),"
                + " n.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))",
            "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('127.0.0.1', 0))",
            "v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); v.connect(u.getsockname())",
            "v.send(b'udp'); print('udp', u.recv(3).decode())",
            "w = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)",
            "w.connect(('::ffff:127.0.0.1', u.getsockname()[1]))",
            "w.send(b'map'); print('udp6', u.recv(3).decode())",
            "import ctypes, struct",
            "libc = ctypes.CDLL(None, use_errno=True)",
            "unspec = struct.pack('H14x', 0)",
            "print('unspec', libc.connect(v.fileno(), unspec, len(unspec)))",
            "try:",
            "    v.send(b'x'); print('unspec sent')",
            "except OSError as e:",
            "    print('unspec', errno.errorcode[e.errno])",
            "");
    long routed = ConnectSupervisor.counts()[0];
    ExecResult r = runner().exec("python3", List.of("-c", script), DENY);
    assertThat(r.exitCode()).as(r.stderrText()).isZero();
    if (ConnectSupervisor.unixAvailability().isAvailable()) {
      // the six inet connects above (AF_UNSPEC is not counted), made by the supervisor
      assertThat(ConnectSupervisor.counts()[0] - routed).isGreaterThanOrEqualTo(6);
    }
    assertThat(r.stdoutText())
        .isEqualTo(
            "AF_INET ping\nnonblocking True 0\nAF_INET6 ping\nnonblocking True 0\nudp udp\n"
                + "udp6 map\nunspec 0\nunspec EDESTADDRREQ\n");
  }

  @Test
  void curlCannotReachTheHostsServers() throws IOException {
    HostRequirements.requireProgram("curl");
    HttpServer server = HttpServer.create(new InetSocketAddress("0.0.0.0", 0), 10);
    server.createContext(
        "/",
        exchange -> {
          byte[] body = "host\n".getBytes(StandardCharsets.US_ASCII);
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    server.start();
    try {
      int port = server.getAddress().getPort();
      List<String> urls = new ArrayList<>();
      urls.add("http://127.0.0.1:" + port + "/");
      hostAddress().ifPresent(a -> urls.add("http://" + a + ":" + port + "/"));
      LocalRunner local = LocalRunner.create(root.toString());
      for (String url : urls) {
        List<String> args = List.of("-sS", "--max-time", "5", url);
        ExecResult control = local.exec("curl", args, DEFAULT);
        assertThat(control.stdoutText()).as(url).isEqualTo("host\n");
        ExecResult denied = runner().exec("curl", args, DENY);
        // 127.0.0.1 is the namespace's own loopback, where nothing listens; any other address
        // has no route.
        assertThat(denied.exitCode()).as(url + ": " + denied.stderrText()).isEqualTo(7);
        assertThat(denied.stdoutText()).isEmpty();
      }
    } finally {
      server.stop(0);
    }
  }

  private static Optional<String> hostAddress() throws IOException {
    for (NetworkInterface i : NetworkInterface.networkInterfaces().toList()) {
      if (i.isUp() && !i.isLoopback()) {
        for (InetAddress a : i.inetAddresses().toList()) {
          if (a instanceof Inet4Address) {
            return Optional.of(a.getHostAddress());
          }
        }
      }
    }
    return Optional.empty();
  }

  @Test
  void aRootChildHasNoCapabilitiesAndCannotLeaveTheNamespaceOrRemount() {
    String caps = "grep -E '^Cap(Eff|Bnd):' /proc/self/status";
    for (ConfinedRunner r :
        List.of(readOnlyHost(), ConfinedRunner.builder(root.toString()).rootless(true).build())) {
      ExecResult inside = sh(r, caps, DENY);
      assertThat(inside.exitCode()).as(inside.stderrText()).isZero();
      assertThat(inside.stdoutText().lines().toList())
          .hasSize(2)
          .allSatisfy(l -> assertThat(capabilities(l)).as(l).isZero());
    }
    // Control: the JVM's own thread keeps them.
    assertThat(capabilities("CapEff:\t" + threadStatus("CapEff"))).isNotZero();

    // setns back through the JVM's namespace file: refused (Landlock's ptrace restriction already
    // refuses opening it; without CAP_SYS_ADMIN setns through any other handle fails too).
    HostRequirements.requireProgram("nsenter");
    String leave = "nsenter --net=/proc/" + ProcessHandle.current().pid() + "/ns/net true";
    assertThat(sh(readOnlyHost(), leave, DENY).exitCode()).isNotZero();
    ExecResult remount = sh(readOnlyHost(), "mount -o remount,rw / && echo remounted", DENY);
    assertThat(remount.exitCode()).isNotZero();
    assertThat(remount.stdoutText()).isEmpty();
  }

  /** The set of a "CapEff:\t000001ffffffffff" line of /proc/PID/status. */
  private static long capabilities(String statusLine) {
    return Long.parseUnsignedLong(statusLine.substring(statusLine.indexOf(':') + 1).strip(), 16);
  }

  /** A field of this thread's /proc status. */
  private static String threadStatus(String field) {
    try {
      return Files.readAllLines(Path.of("/proc/thread-self/status")).stream()
          .filter(l -> l.startsWith(field + ":"))
          .map(l -> l.substring(field.length() + 1).strip())
          .findFirst()
          .orElseThrow();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void readOnlyHostRefusesWritesOutsideWithErofsWhileWritablePathsWork() throws IOException {
    String etc = "/etc/confine-read-only-test-" + ProcessHandle.current().pid();
    String varTmp = "/var/tmp/confine-read-only-test-" + ProcessHandle.current().pid();
    try {
      ExecResult r =
          sh(
              readOnlyHost(),
              "echo x > "
                  + etc
                  + "; touch "
                  + varTmp
                  + "; echo in > inside && echo w > "
                  + writable
                  + "/w && echo t > \"$TMPDIR/t\" && echo x > /dev/null && echo ok",
              DEFAULT);
      assertThat(r.stdoutText()).isEqualTo("ok\n");
      assertThat(r.stderrText().lines().toList())
          .hasSize(2)
          .allSatisfy(l -> assertThat(l).contains("Read-only file system"));
      assertThat(Path.of(etc)).doesNotExist();
      assertThat(Path.of(varTmp)).doesNotExist();
      assertThat(root.resolve("inside")).hasContent("in");
      assertThat(writable.resolve("w")).hasContent("w");
    } finally {
      Files.deleteIfExists(Path.of(etc));
      Files.deleteIfExists(Path.of(varTmp));
    }
  }

  @Test
  void readOnlyHostRefusesWhatLandlockDoesNotCover() throws IOException {
    Path file = Files.writeString(outside.resolve("mode"), "keep");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    String chmod = "chmod 666 " + file;
    // Landlock bounds writes, not metadata: chmod outside the bounds works without the namespace.
    ExecResult landlockOnly =
        sh(ConfinedRunner.builder(root.toString()).rootless(true).build(), chmod, DEFAULT);
    assertThat(landlockOnly.exitCode()).as(landlockOnly.stderrText()).isZero();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-rw-rw-");

    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    ExecResult readOnly = sh(readOnlyHost(), chmod + "; touch -d 2001-01-01 " + file, DEFAULT);
    assertThat(readOnly.exitCode()).isNotZero();
    assertThat(readOnly.stderrText().lines().toList())
        .hasSize(2)
        .allSatisfy(l -> assertThat(l).contains("Read-only file system"));
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
  }

  @Test
  void theHostsMountTableAndTheJvmsThreadsAreUnaffected() throws Exception {
    String leaderBefore = Files.readString(Path.of("/proc/self/mountinfo"));
    String threadBefore = Files.readString(Path.of("/proc/thread-self/mountinfo"));
    List<String> interfacesBefore = interfaces(hostNetDev());
    String cwd = Path.of("/proc/thread-self/cwd").toRealPath().toString();

    ExecResult inside = sh(readOnlyHost(), "cat /proc/self/mountinfo", DENY);
    assertThat(inside.exitCode()).isZero();
    assertThat(inside.stdoutText()).contains(" ro,").isNotEqualTo(leaderBefore);
    for (int i = 0; i < 50; i++) {
      assertThat(readOnlyHost().exec("true", List.of(), i % 2 == 0 ? DENY : DEFAULT).exitCode())
          .isZero();
    }

    assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).isEqualTo(leaderBefore);
    assertThat(Files.readString(Path.of("/proc/thread-self/mountinfo"))).isEqualTo(threadBefore);
    assertThat(Path.of("/proc/thread-self/cwd").toRealPath().toString()).isEqualTo(cwd);
    assertThat(Path.of("").toAbsolutePath().toString()).isEqualTo(System.getProperty("user.dir"));
    assertHostNamespaces(interfacesBefore);

    int n = ForkJoinPool.commonPool().getParallelism();
    CyclicBarrier barrier = new CyclicBarrier(n);
    List<CompletableFuture<Void>> tasks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      tasks.add(
          CompletableFuture.runAsync(
              () -> {
                try {
                  barrier.await(30, TimeUnit.SECONDS);
                  // a confined spawn from this worker too, then the checks on it
                  readOnlyHost().exec("true", List.of(), DENY);
                  assertHostNamespaces(interfacesBefore);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              }));
    }
    for (CompletableFuture<Void> t : tasks) {
      t.get();
    }
  }

  private static void assertHostNamespaces(List<String> interfaces) throws IOException {
    for (String ns : List.of("net", "mnt")) {
      assertThat(Files.readSymbolicLink(Path.of("/proc/thread-self/ns/" + ns)))
          .as(ns + " of " + Thread.currentThread())
          .isEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns/" + ns)));
    }
    assertThat(interfaces(hostNetDev())).isEqualTo(interfaces);
    Path f = Files.createTempFile(Path.of("/var/tmp"), "confine-host-", ".txt");
    Files.delete(f);
  }

  @Test
  void capabilitiesNameTheNamespaces() {
    List<Capability> rows = readOnlyHost().capabilities();
    assertThat(rows)
        .filteredOn(r -> r.dimension() == Dimension.NET_DENY_ALL)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.enforced()).isTrue();
              assertThat(r.detail()).startsWith("private network namespace");
            });
    assertThat(rows)
        .filteredOn(r -> r.dimension() == Dimension.READ_ONLY_HOST)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.enforced()).isTrue();
              assertThat(r.detail()).startsWith("private mount namespace");
            });
    assertThat(runner().capabilities())
        .filteredOn(r -> r.dimension() == Dimension.READ_ONLY_HOST)
        .singleElement()
        .satisfies(r -> assertThat(r.detail()).startsWith("not requested"));
  }
}
