package dev.confine.confined;

import static dev.confine.testing.SessionReads.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.confine.Capability.Dimension;
import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetAction;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.SandboxException;
import dev.confine.linux.confinement.ConnectSupervisor;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.net.ProxyAuditListener;
import dev.confine.net.ProxyDecision;
import dev.confine.net.ProxyProtocol;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.LocalSshd;
import dev.confine.testing.OpenFds;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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

  /** A port next to the origin's, where nothing listens (and no rule allows). */
  int otherPort() {
    return next(port);
  }

  static int next(int p) {
    return p == 65535 ? 1 : p + 1;
  }

  /** An audit listener that adds every decision to {@code decisions}. */
  static ProxyAuditListener recording(java.util.Collection<ProxyDecision> decisions) {
    return new ProxyAuditListener() {
      @Override
      public void decided(ProxyDecision d) {
        decisions.add(d);
      }
    };
  }

  String url(String path) {
    return "http://127.0.0.1:" + port + path;
  }

  @Test
  void allowedDestinationsAreReachedThroughTheProxyAndOthersRefused() {
    ExecResult ok = sh("curl -sS --max-time 10 " + url("/allowed"), allowOrigin());
    assertThat(ok.exitCode()).as(ok.stderrText()).isZero();
    assertThat(ok.stdoutText()).isEqualTo("hello /allowed");

    int other = otherPort();
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
        .containsPattern("(?m)^NO_PROXY=$")
        .containsPattern("(?m)^NODE_USE_ENV_PROXY=1$");
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
            + otherPort()
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
                "http://127.0.0.1:" + otherPort() + "/"),
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

  /** Skips unless the children's connects are supervised here (Linux 6.7 or newer). */
  static void requireSupervised() {
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
    requireSupervised();
    BlockingQueue<ProxyDecision> decisions = new LinkedBlockingQueue<>();
    ConfinedRunner audited = builder().proxyAudit(recording(decisions)).build();
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

      int other = otherPort();
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
    requireSupervised();
    int other = otherPort();
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
    requireSupervised();
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
            .proxyAudit(recording(decisions))
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
    requireSupervised();
    HostRequirements.requireProgram("ssh-keyscan");
    try (LocalSshd sshd = LocalSshd.start()) {
      int ssh = sshd.port();
      int other = next(ssh);
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
   * git over ssh goes through the SOCKS5 listener (GIT_SSH_COMMAND's ProxyCommand, OpenBSD's
   * netcat), which decides the server by the name git was given: an allowed name reaches the sshd
   * (ssh gets as far as checking the server's host key, which it has never seen), a denied name
   * that resolves to the same address reaches nothing.
   */
  @Test
  void gitOverSshGoesThroughTheSocksListenerDecidedByName() throws Exception {
    HostRequirements.require(
        ProxiedNetwork.SOCKS_NETCAT != null, "OpenBSD's netcat (netcat-openbsd) is not installed");
    HostRequirements.requireProgram("git");
    HostRequirements.requireProgram("ssh");
    BlockingQueue<ProxyDecision> decisions = new LinkedBlockingQueue<>();
    InetAddress loopback = InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
    ConfinedRunner named =
        builder()
            .proxyResolver(host -> List.of(InetAddress.getByAddress(host, loopback.getAddress())))
            .proxyAudit(recording(decisions))
            .build();
    try (LocalSshd sshd = LocalSshd.start()) {
      int ssh = sshd.port();
      ExecOptions opts =
          options(
              NetPolicy.allowList(
                  NetRule.allow("sshd.test", ssh),
                  NetRule.allow("127.0.0.1", ssh),
                  NetRule.deny("denied.test")));
      ExecResult r =
          named.exec(
              "sh",
              List.of(
                  "-c",
                  "echo \"$GIT_SSH_COMMAND\"; git ls-remote ssh://sshd.test:"
                      + ssh
                      + "/repo 2>&1; echo ---; git ls-remote ssh://denied.test:"
                      + ssh
                      + "/repo 2>&1; echo done"),
              opts);
      String[] parts = r.stdoutText().split("---\n", -1);
      String[] allowed = parts[0].split("\n", 2);
      assertThat(allowed[0])
          .as(r.stdoutText() + r.stderrText())
          .matches(
              "ssh -o 'ProxyCommand="
                  + java.util.regex.Pattern.quote(ProxiedNetwork.SOCKS_NETCAT.toString())
                  + " -X 5 -x 127\\.0\\.0\\.1:\\d+ %h %p'");
      assertThat(allowed[1]).contains("Host key verification failed");
      assertThat(parts[1]).doesNotContain("Host key verification failed").endsWith("done\n");
      assertThat(sshd.sawConnection(Duration.ofSeconds(5))).as(sshd.logs()).isTrue();
      List<ProxyDecision> seen = new java.util.ArrayList<>();
      decisions.drainTo(seen);
      assertThat(seen)
          .filteredOn(d -> d.protocol() == ProxyProtocol.SOCKS5)
          .extracting(d -> d.host() + ":" + d.port() + " " + d.action())
          .containsExactly("sshd.test:" + ssh + " allow", "denied.test:" + ssh + " deny");
    } finally {
      named.close();
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
    requireSupervised();
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
    requireSupervised();
    HostRequirements.requireProgram("node");
    int other = otherPort();
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
    requireSupervised();
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

  static final String RACE =
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
    requireSupervised();
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
    requireSupervised();
    assertThat(runner.capabilities())
        .filteredOn(c -> c.dimension() == Dimension.NET_ALLOW_LIST)
        .singleElement()
        .satisfies(c -> assertThat(c.detail()).contains("connect supervisor"));
  }
}
