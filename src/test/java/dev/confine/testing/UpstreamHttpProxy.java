package dev.confine.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real HTTP proxy for tests to chain to: Debian's tinyproxy, started on 127.0.0.1 on a free
 * ephemeral port with its configuration and log in a private temporary directory, with or without
 * Basic proxy authentication. It forwards absolute-form plain HTTP ({@code GET
 * http://host:port/...}) and tunnels {@code CONNECT host:port} to any port, 127.0.0.1 included (no
 * {@code ConnectPort} line: tinyproxy then allows every port; Debian's own configuration allows
 * only 443 and 563).
 *
 * <p>tinyproxy rather than squid: it listens about 50 ms after its start where squid takes about a
 * second, it is a single process, and it needs no helper program for Basic authentication. Its
 * quirks: a request without {@code Proxy-Authorization} gets {@code 407}, one with a wrong password
 * {@code 401}; it answers in HTTP/1.0 ({@code HTTP/1.0 200 Connection established} to a CONNECT);
 * and it adds {@code Via: 1.1 confine-upstream (tinyproxy/...)} to what it forwards in plain HTTP.
 *
 * <p>Its log ({@link #accessLog()}) tells what went through it: {@link #requests()} the request
 * lines it received, {@link #sawTarget(String)} whether it opened a connection to a host and port.
 * {@link #close()} ends it and removes its directory. A host without tinyproxy skips the test
 * ({@link HostRequirements}).
 */
public final class UpstreamHttpProxy implements AutoCloseable {
  /** The name in the {@code Via} header this proxy adds to what it forwards in plain HTTP. */
  public static final String VIA_NAME = "confine-upstream";

  private static final String LOG = "tinyproxy.log";

  /** What tinyproxy's configuration parser takes as a BasicAuth user name or password. */
  private static final Pattern TOKEN = Pattern.compile("[-A-Za-z0-9._]+");

  private static final Pattern REQUEST =
      Pattern.compile("Request \\(file descriptor \\d+\\): (.+)");
  private static final Pattern OPENED = Pattern.compile("opensock: opening connection to (\\S+)");

  private final LoopbackServer server;
  private final String userInfo;

  private UpstreamHttpProxy(LoopbackServer server, String userInfo) {
    this.server = server;
    this.userInfo = userInfo;
  }

  /** Starts a proxy that asks for no authentication. */
  public static UpstreamHttpProxy start() {
    return launch("", "");
  }

  /**
   * Starts a proxy that requires Basic proxy authentication as {@code user} with {@code password},
   * each of letters, digits and {@code -._} (what tinyproxy's configuration takes).
   */
  public static UpstreamHttpProxy startWithBasicAuth(String user, String password) {
    for (String token : List.of(user, password)) {
      if (!TOKEN.matcher(token).matches()) {
        throw new IllegalArgumentException(
            "tinyproxy takes only letters, digits and -._ in BasicAuth, not: " + token);
      }
    }
    return launch("BasicAuth " + user + " " + password + "\n", user + ":" + password + "@");
  }

  private static UpstreamHttpProxy launch(String auth, String userInfo) {
    HostRequirements.requireProgram("tinyproxy");
    LoopbackServer server =
        LoopbackServer.start(
            "tinyproxy",
            (dir, port) -> {
              Path config = dir.resolve("tinyproxy.conf");
              Files.writeString(config, config(dir, port) + auth);
              return List.of("tinyproxy", "-d", "-c", config.toString());
            });
    return new UpstreamHttpProxy(server, userInfo);
  }

  /**
   * tinyproxy's configuration: loopback only, every CONNECT port, a log of each request and of each
   * connection it opens (LogLevel Info), no User line (it keeps the user it was started as).
   */
  private static String config(Path dir, int port) throws IOException {
    if (dir.toString().contains("\"")) {
      throw new IOException("a quote in the directory's name: " + dir);
    }
    return """
        Port %d
        Listen 127.0.0.1
        Allow 127.0.0.1
        Timeout 60
        MaxClients 64
        LogFile "%s"
        LogLevel Info
        PidFile "%s"
        ViaProxyName "%s"
        """
        .formatted(port, dir.resolve(LOG), dir.resolve("tinyproxy.pid"), VIA_NAME);
  }

  /** The port it listens on, at 127.0.0.1. */
  public int port() {
    return server.port();
  }

  /** The address it listens on: 127.0.0.1 and {@link #port()}. */
  public InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port());
  }

  /** {@code http://127.0.0.1:PORT}, or {@code http://USER:PASSWORD@127.0.0.1:PORT} with auth. */
  public String url() {
    return "http://" + userInfo + "127.0.0.1:" + port();
  }

  /** tinyproxy's log so far. */
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

  /**
   * The request lines it received so far, refused ones included: {@code GET http://127.0.0.1:8080/x
   * HTTP/1.1}, {@code CONNECT 127.0.0.1:8443 HTTP/1.1}.
   */
  public List<String> requests() {
    return matches(REQUEST);
  }

  /**
   * The {@code host:port} of each connection it opened so far, for a plain request it forwarded or
   * a tunnel: a refused request opens none.
   */
  public List<String> connectionsOpened() {
    return matches(OPENED);
  }

  /** Whether it opened a connection to {@code hostPort} ({@code 127.0.0.1:8080}). */
  public boolean sawTarget(String hostPort) {
    return connectionsOpened().contains(hostPort);
  }

  /** Ends tinyproxy, waits for it and removes its directory. */
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

  private List<String> matches(Pattern pattern) {
    List<String> found = new ArrayList<>();
    for (String line : accessLog().split("\n")) {
      Matcher m = pattern.matcher(line);
      if (m.find()) {
        found.add(m.group(1).strip());
      }
    }
    return found;
  }

  @Override
  public String toString() {
    return "tinyproxy at " + url();
  }
}
