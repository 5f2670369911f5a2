package dev.confine.cli;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.confine.testing.HostRequirements;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** {@code confine proxy}: serves the rules given, prints the variables, audits as JSON lines. */
class ProxyCommandTest {

  @Test
  void servesTheRulesAndAuditsEachDecisionAsAJsonLine(@TempDir Path dir) throws Exception {
    HostRequirements.requireProgram("curl");
    HttpServer origin =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 10);
    origin.createContext(
        "/",
        ex -> {
          ex.sendResponseHeaders(200, 2);
          ex.getResponseBody().write("ok".getBytes(UTF_8));
          ex.close();
        });
    origin.start();
    Path audit = dir.resolve("audit.jsonl");
    CountDownLatch stop = new CountDownLatch(1);
    PipedInputStream lines = new PipedInputStream(1 << 16);
    PrintStream out = new PrintStream(new PipedOutputStream(lines), true, UTF_8);
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CommandLine cli =
        new CommandLine(new ProxyCommand(out, new PrintStream(err, true, UTF_8), stop));
    int port = origin.getAddress().getPort();
    Thread serving =
        Thread.ofPlatform()
            .start(
                () ->
                    cli.execute(
                        "--rule",
                        "allow 127.0.0.1:" + port,
                        "--deny-host",
                        "10.0.0.0/8",
                        "--audit",
                        audit.toString()));
    try {
      Map<String, String> env = new HashMap<>();
      var reader = new java.io.BufferedReader(new java.io.InputStreamReader(lines, UTF_8));
      for (int i = 0; i < 8; i++) {
        String line = reader.readLine();
        int eq = line.indexOf('=');
        env.put(line.substring(0, eq), line.substring(eq + 1));
      }
      assertThat(env)
          .containsOnlyKeys(
              "ALL_PROXY",
              "all_proxy",
              "HTTP_PROXY",
              "http_proxy",
              "HTTPS_PROXY",
              "https_proxy",
              "NO_PROXY",
              "no_proxy");
      assertThat(env.get("HTTP_PROXY")).matches("http://confine:[0-9a-f]{48}@127\\.0\\.0\\.1:\\d+");
      assertThat(curl(env.get("HTTP_PROXY"), "http://127.0.0.1:" + port + "/")).isEqualTo("ok");
      assertThat(
              curl(
                  env.get("HTTP_PROXY"),
                  "http://127.0.0.1:" + (port == 65535 ? 1 : port + 1) + "/"))
          .contains("403");
      List<String> events = waitForLines(audit, 3);
      assertThat(events.get(0))
          .startsWith(
              "{\"event\":\"decision\",\"protocol\":\"http\",\"host\":\"127.0.0.1\",\"port\":"
                  + port)
          .contains(
              "\"action\":\"allow\"",
              "\"rule\":\"allow 127.0.0.1:" + port + "\"",
              "\"mode\":\"allow_list\"");
      assertThat(events)
          .anySatisfy(
              e -> assertThat(e).startsWith("{\"event\":\"closed\"").contains("\"bytes_in\":2"));
      assertThat(events)
          .anySatisfy(e -> assertThat(e).contains("\"action\":\"deny\"", "is a loopback address"));
    } finally {
      stop.countDown();
      serving.join(10_000);
      origin.stop(0);
    }
    assertThat(err.toString(UTF_8)).startsWith("confine: egress proxy listening on 127.0.0.1:");
  }

  private static List<String> waitForLines(Path file, int n) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    List<String> lines = new ArrayList<>();
    while (System.nanoTime() < deadline) {
      lines = Files.exists(file) ? Files.readAllLines(file) : List.of();
      if (lines.size() >= n) {
        break;
      }
      Thread.sleep(20);
    }
    return lines;
  }

  private static String curl(String proxy, String url) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder("curl", "-sS", "-i", "--max-time", "10", "--proxy", proxy, url)
            .redirectErrorStream(true)
            .start();
    String text = new String(p.getInputStream().readAllBytes(), UTF_8);
    p.waitFor();
    return text.startsWith("HTTP/1.1 200") ? text.substring(text.indexOf("\r\n\r\n") + 4) : text;
  }

  @Test
  void withMitmTheBundleIsPrintedTunnelsAreInterceptedAndTheBundleGoesOnExit() throws Exception {
    HostRequirements.requireProgram("curl");
    // Not a TLS server: an intercepted tunnel is a 502 from the proxy's failed handshake with it,
    // where a raw tunnel would leave curl to fail its own handshake.
    ServerSocket plain = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
    Thread.ofVirtual()
        .start(
            () -> {
              while (!plain.isClosed()) {
                try (Socket s = plain.accept()) {
                  s.getOutputStream().write("HTTP/1.1 400 Bad\r\n\r\n".getBytes(UTF_8));
                } catch (IOException e) {
                  // closed
                }
              }
            });
    int port = plain.getLocalPort();
    CountDownLatch stop = new CountDownLatch(1);
    PipedInputStream lines = new PipedInputStream(1 << 16);
    PrintStream out = new PrintStream(new PipedOutputStream(lines), true, UTF_8);
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CommandLine cli =
        new CommandLine(new ProxyCommand(out, new PrintStream(err, true, UTF_8), stop));
    int[] status = new int[1];
    Thread serving =
        Thread.ofPlatform()
            .start(
                () ->
                    status[0] =
                        cli.execute(
                            "--rule",
                            "allow 127.0.0.1:" + port,
                            "--mitm",
                            "--mitm-host",
                            "127.0.0.0/8",
                            "--mitm-inspect-bodies",
                            "--mitm-max-body",
                            "1m"));
    Path bundle;
    try {
      Map<String, String> env = new HashMap<>();
      var reader = new java.io.BufferedReader(new java.io.InputStreamReader(lines, UTF_8));
      for (int i = 0; i < 15; i++) {
        String line = reader.readLine();
        int eq = line.indexOf('=');
        env.put(line.substring(0, eq), line.substring(eq + 1));
      }
      assertThat(env)
          .containsKeys("HTTPS_PROXY", "SSL_CERT_FILE", "CURL_CA_BUNDLE", "JAVA_TOOL_OPTIONS");
      bundle = Path.of(env.get("SSL_CERT_FILE"));
      assertThat(Files.readString(bundle)).contains("-----BEGIN CERTIFICATE-----");
      Process p =
          new ProcessBuilder(
                  "curl",
                  "-sS",
                  "-i",
                  "--max-time",
                  "10",
                  "--proxy",
                  env.get("HTTPS_PROXY"),
                  "--cacert",
                  bundle.toString(),
                  "https://127.0.0.1:" + port + "/")
              .redirectErrorStream(true)
              .start();
      String answer = new String(p.getInputStream().readAllBytes(), UTF_8);
      p.waitFor();
      assertThat(answer)
          .contains(" 502")
          .contains("TLS handshake with 127.0.0.1:" + port + " failed: it does not speak TLS");
    } finally {
      stop.countDown();
      serving.join(10_000);
      plain.close();
    }
    assertThat(status[0]).isZero();
    assertThat(err.toString(UTF_8))
        .contains("confine: intercepting TLS; clients must trust the CA bundle " + bundle);
    assertThat(bundle).doesNotExist();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "--mitm-host 127.0.0.1",
        "--mitm-exclude 127.0.0.1",
        "--mitm --mitm-host a*b.example",
        "--mitm --mitm-max-body lots",
      })
  void badMitmOptionsAreUsageErrorsInOneLine(String args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    List<String> argv = new ArrayList<>(List.of("proxy"));
    argv.addAll(List.of(args.split(" ")));
    int status =
        Main.run(
            argv.toArray(String[]::new),
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, UTF_8),
            new PrintStream(err, true, UTF_8),
            Main.BACKEND);
    assertThat(status).as(err.toString(UTF_8)).isEqualTo(ExitStatus.USAGE);
    assertThat(err.toString(UTF_8).lines())
        .singleElement()
        .satisfies(l -> assertThat(l).startsWith("confine: ").contains("mitm"));
    assertThat(out.toString(UTF_8)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "--listen 0.0.0.0:3128",
        "--listen 127.0.0.1:99999",
        "--rule permit:example.com",
        "--rule allow",
        "--rule allow_example.com:0",
        "--mode deny_all",
        "--allow-host a*b.example",
        "--upstream ftp://proxy:21",
        "--outbound-ca /nonexistent/ca.pem",
        "--outbound-ca /dev/null",
      })
  void badCommandLinesAreUsageErrorsInOneLine(String args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    List<String> argv = new ArrayList<>(List.of("proxy"));
    argv.addAll(List.of(args.replace('_', ' ').split(" ", 2)));
    int status =
        Main.run(
            argv.toArray(String[]::new),
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, UTF_8),
            new PrintStream(err, true, UTF_8),
            Main.BACKEND);
    assertThat(status).as(err.toString(UTF_8)).isEqualTo(ExitStatus.USAGE);
    assertThat(err.toString(UTF_8).lines())
        .singleElement()
        .satisfies(l -> assertThat(l).startsWith("confine: "));
    assertThat(out.toString(UTF_8)).isEmpty();
  }
}
