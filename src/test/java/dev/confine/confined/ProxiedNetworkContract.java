package dev.confine.confined;

import static dev.confine.testing.SessionReads.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.confine.Capability.Dimension;
import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.SandboxException;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.OpenFds;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ALLOW_LIST and PROXY, whichever way the children get there (the subclasses: a private network
 * namespace as root, the connect supervisor rootless): real clients reach allowed destinations
 * through the egress proxy, are refused at denied ones, and reach nothing directly.
 */
abstract class ProxiedNetworkContract {
  @TempDir Path root;

  HttpServer origin;
  int port;
  ConfinedRunner runner;

  /** A runner builder of the way under test, rooted at {@code root}. */
  abstract ConfinedRunner.Builder builder();

  /** Skips unless this host can run the way under test. */
  abstract void requireTheWay();

  @BeforeEach
  void setUp() throws IOException {
    HostRequirements.require(Landlock.availability());
    HostRequirements.require(SeccompFilter.availability());
    requireTheWay();
    HostRequirements.requireProgram("curl");
    origin = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
    origin.createContext(
        "/",
        ex -> {
          byte[] body = ("hello " + ex.getRequestURI().getPath()).getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(200, body.length);
          ex.getResponseBody().write(body);
          ex.close();
        });
    origin.start();
    port = origin.getAddress().getPort();
    runner = builder().build();
  }

  @AfterEach
  void tearDown() {
    if (runner != null) {
      runner.close();
    }
    if (origin != null) {
      origin.stop(0);
    }
  }

  ExecOptions allowOrigin() {
    return options(NetPolicy.allowList(NetRule.allow("127.0.0.1", port)));
  }

  static ExecOptions options(NetPolicy net) {
    return ExecOptions.builder().timeout(Duration.ofSeconds(30)).net(net).build();
  }

  ExecResult sh(String script, ExecOptions options) {
    return runner.exec("sh", List.of("-c", script), options);
  }

  String url(String path) {
    return "http://127.0.0.1:" + port + path;
  }

  @Test
  void allowedDestinationsAreReachedThroughTheProxyAndOthersRefused() {
    ExecResult ok = sh("curl -sS --max-time 10 " + url("/allowed"), allowOrigin());
    assertThat(ok.exitCode()).as(ok.stderrText()).isZero();
    assertThat(ok.stdoutText()).isEqualTo("hello /allowed");

    int other = port == 65535 ? 1 : port + 1;
    ExecResult denied =
        sh("curl -sS -i --max-time 10 http://127.0.0.1:" + other + "/", allowOrigin());
    assertThat(denied.stdoutText())
        .startsWith("HTTP/1.1 403")
        .contains("127.0.0.1:" + other, "policy mode allow_list");

    ExecResult tunnel = sh("curl -sS --proxytunnel --max-time 10 " + url("/tunnel"), allowOrigin());
    assertThat(tunnel.stdoutText()).as(tunnel.stderrText()).isEqualTo("hello /tunnel");
  }

  @Test
  void theChildrenSeeTheProxyVariablesWithoutAToken() {
    ExecResult env = sh("env | grep -i _proxy= | sort", allowOrigin());
    String out = env.stdoutText();
    assertThat(out)
        .containsPattern("(?m)^HTTP_PROXY=http://127\\.0\\.0\\.1:\\d+$")
        .containsPattern("(?m)^https_proxy=http://127\\.0\\.0\\.1:\\d+$")
        .containsPattern("(?m)^ALL_PROXY=socks5h://127\\.0\\.0\\.1:\\d+$")
        .containsPattern("(?m)^NO_PROXY=$");
  }

  /** A client that ignores the variables reaches none of the host's addresses. */
  @Test
  void connectionsThatBypassTheProxyReachNoHostAddress() throws Exception {
    for (var nic : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
      for (var a : java.util.Collections.list(nic.getInetAddresses())) {
        if (a instanceof java.net.Inet4Address && !a.isLoopbackAddress()) {
          ExecResult r =
              sh(
                  "curl -sS --noproxy '*' --max-time 5 http://" + a.getHostAddress() + ":" + port,
                  allowOrigin());
          assertThat(r.exitCode()).as(a.toString()).isNotZero();
        }
      }
    }
  }

  @Test
  void sessionsGetTheSameNetwork() throws Exception {
    String script =
        "curl -sS --max-time 10 "
            + url("/session")
            + "; echo; curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:"
            + (port == 65535 ? 1 : port + 1)
            + "/ >/dev/null 2>&1 || echo refused";
    for (ProcessSpec spec :
        List.of(
            ProcessSpec.pipes(List.of("sh", "-c", script)),
            ProcessSpec.terminal(List.of("sh", "-c", script)))) {
      try (ProcessSession s = runner.start(spec.withOptions(allowOrigin()))) {
        assertThat(s.waitFor().code()).isZero();
        assertThat(readAll(s).replace("\r", "")).isEqualTo("hello /session\nrefused\n");
      }
    }
  }

  /**
   * What does not go through the proxy goes nowhere: TCP to the host's addresses gets no answer
   * (unreachable in a namespace; reset by the transparent proxy, which refuses private addresses),
   * UDP is refused, names do not resolve (the child has no DNS; the proxy resolves for it).
   */
  @Test
  void rawTcpUdpAndDnsFromTheChildReachNothing() throws Exception {
    HostRequirements.requireProgram("python3");
    String host = hostAddress().orElse("192.0.2.1");
    String script =
        String.join(
            "\n",
            "import socket",
            "def attempt(what, f):",
            "    try:",
            "        f()",
            "        print(what, 'reached')",
            "    except OSError as e:",
            "        print(what, 'refused')",
            "def tcp():",
            "    s = socket.create_connection(('" + host + "', " + port + "), timeout=5)",
            "    s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n')",
            "    if not s.recv(1): raise OSError('closed')",
            "def udp():",
            "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
            "    s.sendto(b'x', ('" + host + "', 53))",
            "def dns():",
            "    socket.getaddrinfo('localhost.localdomain.invalid', 80)",
            "attempt('tcp', tcp)",
            "attempt('udp', udp)",
            "attempt('dns', dns)");
    ExecResult r = runner.exec("python3", List.of("-c", script), allowOrigin());
    assertThat(r.stdoutText())
        .as(r.stderrText())
        .isEqualTo("tcp refused\nudp refused\ndns refused\n");
  }

  /** A name the rules allow that resolves to loopback still needs an IP rule. */
  @Test
  void anAllowedNameThatResolvesToLoopbackIsDeniedWithoutAnIpRule() {
    ExecResult r =
        sh(
            "curl -sS -i --max-time 10 http://localhost:" + port + "/",
            options(NetPolicy.allowList(NetRule.allow("localhost"))));
    assertThat(r.stdoutText()).startsWith("HTTP/1.1 403").contains("loopback");
  }

  static java.util.Optional<String> hostAddress() throws IOException {
    for (var nic : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
      for (var a : java.util.Collections.list(nic.getInetAddresses())) {
        if (a instanceof java.net.Inet4Address && !a.isLoopbackAddress()) {
          return java.util.Optional.of(a.getHostAddress());
        }
      }
    }
    return java.util.Optional.empty();
  }

  /**
   * A JVM child reads JAVA_TOOL_OPTIONS: HttpURLConnection goes through the HTTP proxy, a plain
   * socket through SOCKS5 (its name left to the proxy), and both are decided by the rules.
   */
  @Test
  void jvmChildrenGoThroughTheProxyByTheirSystemProperties() throws IOException {
    HostRequirements.requireProgram("java");
    Path source =
        Files.writeString(
            root.resolve("Fetch.java"),
            """
            import java.io.*;
            import java.net.*;
            public class Fetch {
              public static void main(String[] a) throws Exception {
                var c = (HttpURLConnection) new URL(a[0]).openConnection();
                System.out.println(new String(c.getInputStream().readAllBytes()));
                try (Socket s = new Socket(a[1], Integer.parseInt(a[2]))) {
                  s.getOutputStream().write(("GET /socket HTTP/1.0\\r\\n\\r\\n").getBytes());
                  String answer = new String(s.getInputStream().readAllBytes());
                  System.out.println(answer.substring(answer.lastIndexOf('\\n') + 1));
                }
                try {
                  new URL(a[3]).openConnection().getInputStream();
                  System.out.println("denied reached");
                } catch (IOException e) {
                  System.out.println("denied refused");
                }
              }
            }
            """);
    ExecResult r =
        runner.exec(
            "java",
            List.of(
                "-XX:-UsePerfData",
                source.toString(),
                url("/jvm"),
                "127.0.0.1",
                String.valueOf(port),
                "http://127.0.0.1:" + (port == 65535 ? 1 : port + 1) + "/"),
            ExecOptions.builder()
                .timeout(Duration.ofSeconds(60))
                .net(NetPolicy.allowList(NetRule.allow("127.0.0.1", port)))
                .build());
    assertThat(r.stdoutText())
        .as(r.stderrText())
        .isEqualTo("hello /jvm\nhello /socket\ndenied refused\n");
    assertThat(r.stderrText()).contains("Picked up JAVA_TOOL_OPTIONS");
  }

  /**
   * With MITM the child's HTTPS is intercepted: its curl trusts the proxy's CA through the bundle
   * variables the runner injects (and only its child sees them), sees the proxy's leaf, and the
   * proxy checks the origin's certificate against the roots it was given.
   */
  @Test
  void mitmInterceptsTheChildsHttpsWithTheBundleInItsEnvironment() throws Exception {
    com.sun.net.httpserver.HttpsServer https =
        com.sun.net.httpserver.HttpsServer.create(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 10);
    dev.confine.net.tls.TestPki pki =
        dev.confine.net.tls.TestPki.issue("127.0.0.1", Files.createTempDirectory(root, "pki"));
    https.setHttpsConfigurator(new com.sun.net.httpserver.HttpsConfigurator(pki.server()));
    https.createContext(
        "/",
        ex -> {
          byte[] body = "secure".getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(200, body.length);
          ex.getResponseBody().write(body);
          ex.close();
        });
    https.start();
    ConfinedRunner mitmRunner = builder().proxyOutboundRoots(List.of(pki.ca())).build();
    try {
      int httpsPort = https.getAddress().getPort();
      NetPolicy policy =
          NetPolicy.builder()
              .mode(dev.confine.NetMode.ALLOW_LIST)
              .rules(List.of(NetRule.allow("127.0.0.1", httpsPort)))
              .mitm(dev.confine.MitmPolicy.all())
              .build();
      Map<String, String> callers = new java.util.HashMap<>(Map.of("A", "b"));
      ExecOptions opts =
          ExecOptions.builder()
              .timeout(Duration.ofSeconds(30))
              .net(policy)
              .env(new EnvPolicy(null, callers))
              .build();
      ExecResult r =
          mitmRunner.exec(
              "sh",
              List.of(
                  "-c",
                  "test -r \"$SSL_CERT_FILE\" && curl -sS -v --max-time 10 https://127.0.0.1:"
                      + httpsPort
                      + "/ 2>err; echo; grep -o 'issuer: CN=[^;]*' err"),
              opts);
      assertThat(r.stdoutText())
          .as(r.stderrText())
          .isEqualTo("secure\nissuer: CN=Confine egress proxy temporary CA\n");
      assertThat(callers).containsOnlyKeys("A");
    } finally {
      mitmRunner.close();
      https.stop(0);
    }
  }

  @Test
  void pythonUrllibGoesThroughTheProxy() {
    HostRequirements.requireProgram("python3");
    ExecResult r =
        runner.exec(
            "python3",
            List.of(
                "-c",
                "import urllib.request,sys;"
                    + "sys.stdout.write(urllib.request.urlopen('"
                    + url("/py")
                    + "', timeout=10).read().decode())"),
            allowOrigin());
    assertThat(r.stdoutText()).as(r.stderrText()).isEqualTo("hello /py");
  }

  /** git clones over HTTP (the dumb protocol, from a file server) through the proxy. */
  @Test
  void gitClonesOverHttpThroughTheProxy() throws Exception {
    HostRequirements.requireProgram("git");
    Path work = Files.createTempDirectory(root, "repo");
    Path served = Files.createTempDirectory("confine-git-served");
    try {
      git(work, "init", "-q", "-b", "main");
      Files.writeString(work.resolve("README"), "cloned through the proxy\n");
      git(work, "add", "README");
      git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one");
      git(served, "clone", "-q", "--bare", work.toString(), served.resolve("repo.git").toString());
      git(served.resolve("repo.git"), "update-server-info");
      com.sun.net.httpserver.HttpServer files =
          com.sun.net.httpserver.SimpleFileServer.createFileServer(
              new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
              served,
              com.sun.net.httpserver.SimpleFileServer.OutputLevel.NONE);
      files.start();
      try {
        int filesPort = files.getAddress().getPort();
        ExecResult r =
            sh(
                "git clone -q http://127.0.0.1:"
                    + filesPort
                    + "/repo.git "
                    + root.resolve("clone")
                    + " && cat "
                    + root.resolve("clone/README"),
                options(NetPolicy.allowList(NetRule.allow("127.0.0.1", filesPort))));
        assertThat(r.stdoutText()).as(r.stderrText()).isEqualTo("cloned through the proxy\n");
      } finally {
        files.stop(0);
      }
    } finally {
      try (var paths = Files.walk(served)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static void git(Path dir, String... args) throws Exception {
    List<String> command = new java.util.ArrayList<>(List.of("git", "-C", dir.toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(command + ": " + out).isZero();
  }

  @Test
  void proxyModeAllowsWhatNoRuleDeniesAndAppliesTheDenyRules() {
    NetPolicy proxyMode =
        NetPolicy.builder()
            .mode(dev.confine.NetMode.PROXY)
            .rules(List.of(NetRule.allow("127.0.0.1", port), NetRule.deny("blocked.test")))
            .build();
    ExecResult ok = sh("curl -sS --max-time 10 " + url("/p"), options(proxyMode));
    assertThat(ok.stdoutText()).as(ok.stderrText()).isEqualTo("hello /p");
    ExecResult denied = sh("curl -sS -i --max-time 10 http://blocked.test/", options(proxyMode));
    assertThat(denied.stdoutText()).startsWith("HTTP/1.1 403").contains("policy mode proxy");
  }

  @Test
  void whatTheCallerInjectsWins() {
    ExecOptions opts =
        ExecOptions.builder()
            .timeout(Duration.ofSeconds(30))
            .net(NetPolicy.allowList(NetRule.allow("127.0.0.1", port)))
            .env(new EnvPolicy(null, Map.of("HTTP_PROXY", "http://mine.invalid:1")))
            .build();
    ExecResult r = sh("echo $HTTP_PROXY; echo $http_proxy", opts);
    assertThat(r.stdoutText().lines().toList()).first().isEqualTo("http://mine.invalid:1");
    assertThat(r.stdoutText().lines().toList().get(1)).startsWith("http://127.0.0.1:");
  }

  /** An inherited JAVA_TOOL_OPTIONS keeps its flags, the proxy's properties added after them. */
  @Test
  void inheritedJavaToolOptionsAreKeptAndExtended() {
    ConfinedRunner withHostFlags =
        builder()
            .hostEnvironment(
                () -> Map.of("PATH", System.getenv("PATH"), "JAVA_TOOL_OPTIONS", "-Xss2m"))
            .build();
    try {
      ExecResult r =
          withHostFlags.exec("sh", List.of("-c", "echo \"$JAVA_TOOL_OPTIONS\""), allowOrigin());
      assertThat(r.stdoutText()).startsWith("-Xss2m -Dhttp.proxyHost=127.0.0.1 ");
    } finally {
      withHostFlags.close();
    }
  }

  @Test
  void theEnforcementReportNamesTheModes() {
    assertThat(runner.enforcement().enforces(dev.confine.NetMode.ALLOW_LIST)).isTrue();
    assertThat(runner.enforcement().enforces(dev.confine.NetMode.PROXY)).isTrue();
    assertThat(runner.capabilities())
        .filteredOn(c -> c.dimension() == Dimension.NET_ALLOW_LIST)
        .singleElement()
        .satisfies(c -> assertThat(c.enforced()).isTrue());
  }

  /** A listed unix socket that does not exist is NOT_FOUND (seed §10.3 step 7). */
  @Test
  void aListedUnixSocketThatDoesNotExistIsNotFound() {
    NetPolicy withSockets =
        NetPolicy.builder()
            .mode(dev.confine.NetMode.ALLOW_LIST)
            .rules(List.of(NetRule.allow("127.0.0.1", port)))
            .unixSockets(List.of(root.resolve("missing.sock").toString()))
            .build();
    assertThatThrownBy(() -> runner.exec("true", List.of(), options(withSockets)))
        .isInstanceOfSatisfying(
            SandboxException.class,
            e -> assertThat(e.kind()).isEqualTo(SandboxException.Kind.NOT_FOUND))
        .hasMessageContaining("missing.sock\" does not exist");
  }

  /**
   * Each runner's proxy, listener and namespace are released by its close: no socket, epoll, event
   * or namespace descriptor is left (a runner's scratch directories live as long as the JVM, by
   * design, so descriptors are compared by kind).
   */
  @Test
  void closeReleasesTheProxiesAndLaterExecsAreRefused() throws Exception {
    // A first runner loads what the JVM keeps open for good (the jars, Netty's native library).
    assertThat(sh("curl -sS --max-time 10 " + url("/warm"), allowOrigin()).stdoutText())
        .isEqualTo("hello /warm");
    runner.close();
    long before = networkFds();
    for (int i = 0; i < 3; i++) {
      runner = builder().build();
      ExecResult ok = sh("curl -sS --max-time 10 " + url("/x"), allowOrigin());
      assertThat(ok.stdoutText()).isEqualTo("hello /x");
      assertThat(networkFds()).isGreaterThan(before);
      runner.close();
      runner.close();
      assertThatThrownBy(() -> runner.exec("true", List.of(), allowOrigin()))
          .isInstanceOf(SandboxException.class)
          .hasMessageContaining("closed");
    }
    // A supervised confinement's seccomp listener is closed by the supervisor once the retired
    // confinement thread has ended (its last task): moments after close, not during it.
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (networkFds() > before && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(networkFds()).isLessThanOrEqualTo(before);
  }

  /** A policy the proxy refuses is a VALIDATION error that leaves no socket or namespace open. */
  @Test
  void aPolicyTheProxyRefusesLeavesNothingOpen() throws Exception {
    assertThat(sh("true", allowOrigin()).exitCode()).isZero();
    long before = networkFds();
    for (int i = 0; i < 3; i++) {
      assertThatThrownBy(
              () -> sh("true", options(NetPolicy.allowList(NetRule.allow("a*b.example")))))
          .isInstanceOfSatisfying(
              SandboxException.class,
              e -> assertThat(e.kind()).isEqualTo(SandboxException.Kind.VALIDATION))
          .hasMessageContaining("a*b.example");
    }
    assertThat(networkFds()).isLessThanOrEqualTo(before);
  }

  /**
   * A runner given a new policy per exec keeps only a few idle proxies: the least recently used are
   * closed (their sockets, threads and namespaces released), the ones in use never.
   */
  @Test
  void idleProxiesBeyondTheBoundAreClosed() throws Exception {
    assertThat(sh("true", allowOrigin()).exitCode()).isZero();
    int bound = ConfinedRunner.IDLE_NETWORKS;
    for (int i = 0; i < bound + 6; i++) {
      NetPolicy distinct =
          NetPolicy.allowList(NetRule.allow("127.0.0.1", port), NetRule.deny("x" + i + ".test"));
      ExecResult r = sh("curl -sS --max-time 10 " + url("/" + i), options(distinct));
      assertThat(r.stdoutText()).isEqualTo("hello /" + i);
      assertThat(runner.proxiedNetworks()).isLessThanOrEqualTo(bound);
    }
    // One in use while others come and go stays usable.
    try (ProcessSession held =
        runner.start(
            ProcessSpec.pipes(List.of("sh", "-c", "read x; curl -sS " + url("/held")))
                .withOptions(allowOrigin()))) {
      for (int i = 0; i < bound + 2; i++) {
        sh("true", options(NetPolicy.allowList(NetRule.deny("y" + i + ".test"))));
      }
      held.write("go\n".getBytes(StandardCharsets.UTF_8));
      assertThat(held.waitFor().code()).isZero();
      assertThat(readAll(held)).isEqualTo("hello /held");
    }
    long proxyThreads =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("confine-proxy"))
            .count();
    assertThat(proxyThreads).isLessThanOrEqualTo((bound + 1) * 4L);
  }

  /** This JVM's sockets, anonymous inodes (epoll, eventfd, timerfd), pipes and namespaces. */
  static long networkFds() throws IOException {
    OpenFds.settled();
    long n = 0;
    try (var fds = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : fds.toList()) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.matches("(socket|anon_inode|pipe|net):.*")) {
            n++;
          }
        } catch (IOException e) {
          // closed meanwhile
        }
      }
    }
    return n;
  }
}
