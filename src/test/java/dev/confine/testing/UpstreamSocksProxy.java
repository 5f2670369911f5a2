package dev.confine.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real SOCKS5 proxy (RFC 1928) for tests to chain to: Debian's dante-server ({@code danted}),
 * started on 127.0.0.1 on a free ephemeral port with its configuration and log in a private
 * temporary directory, without authentication or with RFC 1929 username/password. It connects only
 * from 127.0.0.1 ({@code external: 127.0.0.1}) and only to 127.0.0.0/8 (a {@code socks pass} rule;
 * any other target is blocked), so a test's traffic stays on the loopback.
 *
 * <p>dante's {@code username} method checks the name and password against the system's password
 * database (getpwnam/getspnam and crypt), there being no password file of its own. So {@link
 * #startWithPassword(String, String)} needs root: it makes a system account for the test, once
 * ({@code useradd --system}, no home, shell {@code /usr/sbin/nologin}, marked by its comment
 * {@value #ACCOUNT_COMMENT}), sets its password ({@code chpasswd}) on every start, and refuses to
 * touch an account it did not make. The account stays (it is no service and cannot log in); two
 * proxies started at once for the same account must use the same password.
 *
 * <p>Its log ({@link #accessLog()}) tells what went through it: {@link #connects()} each connection
 * it passed with its user and target, {@link #sawTarget(String)} whether it reached a host and
 * port. {@link #close()} ends dante with every process it forked and removes its directory. A host
 * without dante-server skips the test ({@link HostRequirements}).
 */
public final class UpstreamSocksProxy implements AutoCloseable {
  /** An account name for {@link #startWithPassword(String, String)} that tests can share. */
  public static final String TEST_USER = "confine-socks";

  /** The comment ({@code GECOS}) that marks an account as this fixture's. */
  public static final String ACCOUNT_COMMENT = "Confine test fixture UpstreamSocksProxy";

  private static final String LOG = "danted.log";
  private static final Pattern ACCOUNT_NAME = Pattern.compile("[a-z_][a-z0-9_-]{0,30}");
  private static final Object ACCOUNTS = new Object();

  /**
   * A connection dante passed: {@code pass(1): tcp/connect [: [username%USER@]CLIENT INTERNAL ->
   * EXTERNAL TARGET}, each address written {@code a.b.c.d.PORT}.
   */
  private static final Pattern CONNECT =
      Pattern.compile("pass\\(\\d+\\): tcp/connect \\[: (?:\\w+%(\\S+)@)?\\S+ \\S+ -> \\S+ (\\S+)");

  /** A connection dante passed: the user it authenticated ("" without auth), {@code host:port}. */
  public record Connect(String user, String target) {}

  private final LoopbackServer server;
  private final String userInfo;

  private UpstreamSocksProxy(LoopbackServer server, String userInfo) {
    this.server = server;
    this.userInfo = userInfo;
  }

  /** Starts a proxy that asks for no authentication (method 0x00). */
  public static UpstreamSocksProxy start() {
    HostRequirements.requireProgram("danted");
    return launch("none", "");
  }

  /**
   * Starts a proxy that requires RFC 1929 username/password (method 0x02) as {@code user} with
   * {@code password}: the system account {@code user} (made when missing) gets that password. Needs
   * root.
   *
   * @throws IllegalArgumentException when {@code user} is an account this fixture did not make
   */
  public static UpstreamSocksProxy startWithPassword(String user, String password) {
    HostRequirements.requireProgram("danted");
    HostRequirements.requireRoot();
    HostRequirements.requireProgram("useradd");
    HostRequirements.requireProgram("chpasswd");
    ensureAccount(user, password);
    return launch(
        "username",
        LoopbackServer.percentEncode(user) + ":" + LoopbackServer.percentEncode(password) + "@");
  }

  private static UpstreamSocksProxy launch(String method, String userInfo) {
    LoopbackServer server =
        LoopbackServer.start(
            "danted",
            (dir, port) -> {
              Path config = dir.resolve("danted.conf");
              Files.writeString(config, config(dir, port, method));
              return List.of(
                  "danted", "-f", config.toString(), "-p", dir.resolve("danted.pid").toString());
            });
    return new UpstreamSocksProxy(server, userInfo);
  }

  /**
   * dante's configuration. As root it runs unprivileged as nobody and takes root back to read the
   * shadow passwords; as another user it stays that user (the {@code user.*} lines need root).
   */
  private static String config(Path dir, int port, String method) {
    String users =
        HostRequirements.isRoot() ? "user.privileged: root\nuser.unprivileged: nobody\n" : "";
    return """
        logoutput: %s
        internal: 127.0.0.1 port = %d
        external: 127.0.0.1
        clientmethod: none
        socksmethod: %s
        %sclient pass {
          from: 127.0.0.1/32 to: 0.0.0.0/0
          log: error connect disconnect
        }
        socks pass {
          from: 127.0.0.1/32 to: 127.0.0.0/8
          log: error connect disconnect
        }
        """
        .formatted(dir.resolve(LOG), port, method, users);
  }

  /** Makes {@code user} this fixture's system account if missing, and sets its password. */
  private static void ensureAccount(String user, String password) {
    if (!ACCOUNT_NAME.matcher(user).matches()) {
      throw new IllegalArgumentException("not a name for a test account: " + user);
    }
    if (password.isEmpty()
        || password.getBytes(StandardCharsets.UTF_8).length > 255
        || password.chars().anyMatch(c -> c == '\n' || c == '\r' || c == 0)) {
      throw new IllegalArgumentException("RFC 1929 takes 1 to 255 bytes, no line break or NUL");
    }
    synchronized (ACCOUNTS) {
      Optional<String> comment = accountComment(user);
      if (comment.isEmpty()) {
        int made =
            run(
                null,
                "useradd",
                "--system",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                "--comment",
                ACCOUNT_COMMENT,
                user);
        comment = accountComment(user); // another JVM may have made it meanwhile (exit 9)
        if (made != 0 && comment.isEmpty()) {
          throw new IllegalStateException("useradd " + user + " failed with " + made);
        }
      }
      if (!comment.orElseThrow().equals(ACCOUNT_COMMENT)) {
        throw new IllegalArgumentException(
            "will not set the password of "
                + user
                + ": an account this fixture did not make (its comment is not "
                + ACCOUNT_COMMENT
                + ")");
      }
      int set = run(user + ":" + password + "\n", "chpasswd");
      if (set != 0) {
        throw new IllegalStateException("chpasswd for " + user + " failed with " + set);
      }
    }
  }

  /** The comment of the local account {@code user} in /etc/passwd, if it exists. */
  private static Optional<String> accountComment(String user) {
    try {
      for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
        String[] f = line.split(":", -1);
        if (f.length >= 5 && f[0].equals(user)) {
          return Optional.of(f[4]);
        }
      }
      return Optional.empty();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Runs {@code command} with {@code input} on its stdin (none when null); its exit status. */
  private static int run(String input, String... command) {
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      try (var stdin = p.getOutputStream()) {
        if (input != null) {
          stdin.write(input.getBytes(StandardCharsets.UTF_8));
        }
      }
      return p.waitFor();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running " + command[0], e);
    }
  }

  /** The port it listens on, at 127.0.0.1. */
  public int port() {
    return server.port();
  }

  /** The address it listens on: 127.0.0.1 and {@link #port()}. */
  public InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port());
  }

  /**
   * {@code socks5://127.0.0.1:PORT}, or {@code socks5://USER:PASSWORD@127.0.0.1:PORT} (percent
   * encoded) with a password.
   */
  public String url() {
    return "socks5://" + userInfo + "127.0.0.1:" + port();
  }

  /** dante's log so far. */
  public String accessLog() {
    return server.read(LOG);
  }

  /**
   * Whether its log shows {@code text} within 5 seconds, for what it may log just after the client
   * saw the outcome.
   */
  public boolean awaitLog(String text) {
    return server.awaitText(LOG, text, Duration.ofSeconds(5));
  }

  /** Each connection it passed so far, with the user it authenticated and the target reached. */
  public List<Connect> connects() {
    List<Connect> found = new ArrayList<>();
    for (String line : accessLog().split("\n")) {
      Matcher m = CONNECT.matcher(line);
      if (m.find()) {
        found.add(new Connect(m.group(1) == null ? "" : m.group(1), hostPort(m.group(2))));
      }
    }
    return found;
  }

  /** Whether it passed a connection to {@code hostPort} ({@code 127.0.0.1:8080}). */
  public boolean sawTarget(String hostPort) {
    return connects().stream().anyMatch(c -> c.target().equals(hostPort));
  }

  /** Ends dante and every process it forked, waits for them and removes its directory. */
  @Override
  public void close() {
    server.close();
  }

  /** Its pid, which is also its process group's (for tests of the fixture). */
  long pid() {
    return server.pid();
  }

  /** Its private directory (for tests of the fixture). */
  Path directory() {
    return server.directory();
  }

  /** dante's {@code 127.0.0.1.8080} as {@code 127.0.0.1:8080}. */
  private static String hostPort(String address) {
    int dot = address.lastIndexOf('.');
    return address.substring(0, dot) + ":" + address.substring(dot + 1);
  }

  @Override
  public String toString() {
    return "danted at " + url();
  }
}
