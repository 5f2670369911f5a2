package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.confined.ConfinedModes.Mode;
import dev.confine.linux.confinement.ConnectSupervisor;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Under DENY_ALL the host's unix sockets (a Docker, D-Bus or agent socket: a way out of any
 * sandbox) are out of reach, in every DENY_ALL mode this host can run: the connect supervisor
 * decides every connect by the socket file it resolves to, and lets the children reach only the
 * sockets they could have made themselves. Attacked by path, through a symbolic link in the root,
 * by a relative path, as an abstract name, with a datagram (which needs no connect), through a hard
 * link made in the root (on the same filesystem), and by a thread rewriting the address while
 * another connects; the children's own sockets keep working.
 */
@Tag("confinement")
class DenyAllUnixSocketsTest {
  @TempDir Path root;
  @TempDir Path host;

  ServerSocketChannel daemon;
  Path daemonSocket;

  @BeforeEach
  void setUp() throws IOException {
    HostRequirements.require(Landlock.availability());
    HostRequirements.require(SeccompFilter.availability());
    HostRequirements.require(ConnectSupervisor.unixAvailability());
    HostRequirements.requireProgram("python3");
    // Open to everyone, so that nothing but the confinement refuses a child (nobody's too).
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxrwxrwx"));
    Files.setPosixFilePermissions(host, PosixFilePermissions.fromString("rwxrwxrwx"));
    daemonSocket = host.resolve("daemon.sock");
    daemon = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    daemon.bind(UnixDomainSocketAddress.of(daemonSocket));
    daemon.configureBlocking(false);
    Files.setPosixFilePermissions(daemonSocket, PosixFilePermissions.fromString("rw-rw-rw-"));
    Files.createSymbolicLink(root.resolve("link.sock"), daemonSocket);
  }

  @AfterEach
  void tearDown() throws IOException {
    if (daemon != null) {
      daemon.close();
    }
  }

  static Stream<Mode> denyAllModes() {
    return ConfinedModes.available().stream()
        .filter(m -> m.options().net().mode() == NetMode.DENY_ALL);
  }

  private int accepted() throws IOException {
    int n = 0;
    for (SocketChannel c; (c = daemon.accept()) != null; ) {
      c.close();
      n++;
    }
    return n;
  }

  private static final String ATTACKS =
      String.join(
          "\n",
          "import errno, os, socket",
          "def attempt(name, path, kind=socket.SOCK_STREAM):",
          "    try:",
          "        s = socket.socket(socket.AF_UNIX, kind)",
          "    except OSError as e:",
          "        print(name, 'socket', errno.errorcode[e.errno]); return",
          "    try:",
          "        if kind == socket.SOCK_DGRAM:",
          "            s.sendto(b'x', path); print(name, 'sent')",
          "        else:",
          "            s.connect(path); print(name, 'connected')",
          "    except OSError as e:",
          "        print(name, errno.errorcode[e.errno])",
          "    finally:",
          "        s.close()",
          "attempt('path', os.environ['DAEMON'])",
          "attempt('link', 'link.sock')",
          "attempt('relative', os.environ['RELATIVE'])",
          "attempt('abstract', '\\0confine-deny-all-test')",
          "attempt('datagram', os.environ['DAEMON'], socket.SOCK_DGRAM)",
          "try:",
          "    os.link(os.environ['DAEMON'], 'hard.sock'); attempt('hardlink', 'hard.sock')",
          "except OSError as e:",
          "    print('hardlink', 'refused' if e.errno in (errno.EXDEV, errno.EPERM)"
              + " else errno.errorcode[e.errno])",
          "try:",
          "    socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); print('datagram-pair made')",
          "except OSError as e:",
          "    print('datagram-pair', errno.errorcode[e.errno])",
          "for name, d in (('own', os.getcwd()), ('tmp', os.environ['TMPDIR'])):",
          "    for kind, t in (('stream', socket.SOCK_STREAM), ('seqpacket', socket.SOCK_SEQPACKET)):",
          "        p = os.path.join(d, kind + '.sock')",
          "        srv = socket.socket(socket.AF_UNIX, t); srv.bind(p); srv.listen(1)",
          "        c = socket.socket(socket.AF_UNIX, t); c.connect(os.path.basename(p)",
          "            if d == os.getcwd() else p)",
          "        a, _ = srv.accept(); c.send(b'x'); print(name, kind, a.recv(1).decode())",
          "        for s in (a, c, srv): s.close()",
          "pair = socket.socketpair(); pair[0].send(b'y'); print('pair', pair[1].recv(1).decode())");

  @ParameterizedTest
  @MethodSource("denyAllModes")
  void theHostsUnixSocketsAreOutOfReachAndTheChildrensOwnWork(Mode mode) throws IOException {
    ConfinedRunner runner = mode.runner(root);
    try {
      Map<String, String> env =
          Map.of(
              "DAEMON", daemonSocket.toString(),
              "RELATIVE", root.toRealPath().relativize(daemonSocket.toRealPath()).toString());
      ExecResult r =
          runner.exec(
              ConfinedModes.PYTHON,
              List.of("-c", ATTACKS),
              ExecOptions.builder()
                  .timeout(Duration.ofSeconds(60))
                  .net(mode.options().net())
                  .env(EnvPolicy.inheritAll().withInject(env))
                  .build());
      assertThat(r.stdoutText())
          .as(r.stderrText())
          .isEqualTo(
              String.join(
                  "\n",
                  "path EACCES",
                  "link EACCES",
                  "relative EACCES",
                  "abstract EACCES",
                  "datagram socket EACCES",
                  // A hard link into the root would make the daemon's socket look like theirs:
                  // Landlock refuses to reparent a file from outside the writable paths (REFER:
                  // EXDEV), and for another user's file protected_hardlinks may first (EPERM).
                  "hardlink refused",
                  "datagram-pair EACCES",
                  "own stream x",
                  "own seqpacket x",
                  "tmp stream x",
                  "tmp seqpacket x",
                  "pair y",
                  ""));
      assertThat(accepted()).as("connections the daemon accepted").isZero();
      // The same runner with the host's network reaches it (the attacks above were not refused
      // for another reason).
      ExecResult control =
          runner.exec(
              ConfinedModes.PYTHON,
              List.of(
                  "-c",
                  "import socket; s = socket.socket(socket.AF_UNIX); s.connect('link.sock');"
                      + " print('connected')"),
              ExecOptions.builder().timeout(Duration.ofSeconds(60)).build());
      assertThat(control.stdoutText()).as(control.stderrText()).isEqualTo("connected\n");
      assertThat(accepted()).isEqualTo(1);
    } finally {
      runner.close();
    }
  }

  /**
   * A thread rewriting the socket's path between the children's own socket and the daemon's while
   * another connects, 10,000 times: the supervisor connects to what it resolved from its own copy
   * of the address, so no connect reaches the daemon.
   */
  @ParameterizedTest
  @MethodSource("denyAllModes")
  void aRacingThreadNeverReachesTheDaemon(Mode mode) throws IOException {
    // Two paths of one length, so that every mix of their bytes is a path too.
    Path own = root.resolve("o");
    Files.createDirectories(own);
    Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwxrwxrwx"));
    String daemonPath = daemonSocket.toRealPath().toString();
    String ownPath = own.toRealPath().resolve("x").toString();
    while (ownPath.length() < daemonPath.length()) {
      ownPath = ownPath + "x";
    }
    Path racedDaemon = daemonSocket;
    if (daemonPath.length() < ownPath.length()) {
      racedDaemon =
          host.resolve("d".repeat(ownPath.length() - host.toRealPath().toString().length() - 1));
      Files.move(daemonSocket, racedDaemon);
      daemonPath = racedDaemon.toRealPath().toString();
    }
    assertThat(daemonPath).hasSameSizeAs(ownPath);
    Path script = Files.writeString(root.resolve("UnixRace.java"), RACE);
    ConfinedRunner runner = mode.runner(root);
    try {
      ExecResult r =
          runner.exec(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              List.of(
                  "--enable-native-access=ALL-UNNAMED",
                  script.toString(),
                  ownPath,
                  daemonPath,
                  "10000"),
              ExecOptions.builder()
                  .timeout(Duration.ofSeconds(120))
                  .net(NetPolicy.denyAll())
                  .build());
      String[] counts = r.stdoutText().strip().split(" ");
      assertThat(counts).as(r.stdoutText() + r.stderrText()).hasSize(2);
      assertThat(Integer.parseInt(counts[0])).as("connected to its own socket").isPositive();
      assertThat(accepted()).as("connections the daemon accepted").isZero();
    } finally {
      runner.close();
    }
  }

  static final String RACE =
      """
      import static java.lang.foreign.ValueLayout.*;

      import java.lang.foreign.*;
      import java.lang.invoke.MethodHandle;
      import java.net.StandardProtocolFamily;
      import java.net.UnixDomainSocketAddress;
      import java.nio.channels.ServerSocketChannel;
      import java.nio.charset.StandardCharsets;

      public class UnixRace {
        static final Linker L = Linker.nativeLinker();

        static MethodHandle fn(String name, MemoryLayout ret, MemoryLayout... args) {
          return L.downcallHandle(
              L.defaultLookup().find(name).orElseThrow(), FunctionDescriptor.of(ret, args));
        }

        static final MethodHandle SOCKET = fn("socket", JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT);
        static final MethodHandle CONNECT = fn("connect", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
        static final MethodHandle CLOSE = fn("close", JAVA_INT, JAVA_INT);
        static volatile boolean stop;

        public static void main(String[] a) throws Throwable {
          byte[] own = a[0].getBytes(StandardCharsets.UTF_8);
          byte[] daemon = a[1].getBytes(StandardCharsets.UTF_8);
          int tries = Integer.parseInt(a[2]);
          ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
          server.bind(UnixDomainSocketAddress.of(a[0]), 4096);
          Thread acceptor =
              Thread.ofPlatform().daemon().start(() -> {
                try {
                  while (true) {
                    server.accept().close();
                  }
                } catch (Exception e) {
                  // closed
                }
              });
          MemorySegment sa = Arena.global().allocate(110, 8);
          sa.set(JAVA_SHORT, 0, (short) 1); // AF_UNIX
          MemorySegment.copy(own, 0, sa, JAVA_BYTE, 2, own.length);
          Thread flipper =
              Thread.ofPlatform().start(() -> {
                for (int i = 0; !stop; i++) {
                  byte[] p = (i & 1) == 0 ? own : daemon;
                  for (int j = 0; j < p.length; j++) {
                    sa.set(JAVA_BYTE, 2 + j, p[j]);
                  }
                }
              });
          int connected = 0, failed = 0;
          for (int i = 0; i < tries; i++) {
            // Non-blocking: a connect that got through to the daemon, which accepts nothing, must
            // not wait for room in its backlog.
            int fd = (int) SOCKET.invokeExact(1, 1 | 04000, 0);
            if ((int) CONNECT.invokeExact(fd, sa, 2 + own.length + 1) == 0) {
              connected++;
            } else {
              failed++;
            }
            int c = (int) CLOSE.invokeExact(fd);
          }
          stop = true;
          flipper.join();
          System.out.println(connected + " " + failed);
          System.exit(0);
        }
      }
      """;
}
