package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Clients agents run, through the proxy with only its environment or proxy setting: Python's
 * urllib, the JDK's HttpClient, and {@code git clone} over HTTP from a local server.
 */
class RealClientsTest {

  @Test
  void pythonUrllibGoesThroughTheProxyAndSeesItsRefusal() throws Exception {
    HostRequirements.requireProgram("python3");
    try (Origin origin = new Origin();
        EgressProxy proxy = proxy(origin.port())) {
      String script =
          "import urllib.request, urllib.error, sys\n"
              + "print(urllib.request.urlopen(sys.argv[1]).read().decode())\n"
              + "try:\n"
              + "  urllib.request.urlopen(sys.argv[2])\n"
              + "except urllib.error.HTTPError as e:\n"
              + "  print(e.code, e.read().decode().strip())\n";
      var r =
          Clients.run(
              proxy.environment(),
              "python3",
              "-c",
              script,
              "http://127.0.0.1:" + origin.port() + "/hello",
              "http://93.184.216.34/");
      assertThat(r.err()).isEmpty();
      assertThat(r.out().lines())
          .containsExactly(
              "hello",
              "403 confine egress proxy: 93.184.216.34:80 denied: not in the allow-list (policy mode"
                  + " allow_list)");
    }
  }

  @Test
  void theJdkHttpClientGoesThroughAProxyWithoutToken() throws Exception {
    try (Origin origin = new Origin();
        EgressProxy proxy =
            EgressProxy.builder(NetPolicy.allowList(NetRule.allow("127.0.0.1", origin.port())))
                .listenOnLoopback()
                .requireToken(false)
                .start()) {
      HttpClient client =
          HttpClient.newBuilder()
              .proxy(ProxySelector.of(proxy.address().orElseThrow()))
              .connectTimeout(Duration.ofSeconds(5))
              .build();
      HttpResponse<String> ok =
          client.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + origin.port() + "/hello"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.body()).isEqualTo("hello");
      HttpResponse<String> denied =
          client.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:1/")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(denied.statusCode()).isEqualTo(403);
      assertThat(denied.body()).contains("127.0.0.1 is a loopback address");
    }
  }

  @Test
  void gitClonesOverHttpThroughTheProxy(@TempDir Path dir) throws Exception {
    HostRequirements.requireProgram("git");
    HostRequirements.requireProgram("python3");
    Path repo = dir.resolve("serve/repo.git");
    Path work = dir.resolve("work");
    Map<String, String> none = Map.of();
    git(none, dir, "init", "-q", work.toString());
    Files.writeString(work.resolve("README"), "through the proxy\n");
    git(none, work, "add", "README");
    git(none, work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one");
    git(none, dir, "clone", "-q", "--bare", work.toString(), repo.toString());
    git(none, repo, "update-server-info");
    Process server =
        new ProcessBuilder("python3", "-m", "http.server", "0", "--bind", "127.0.0.1")
            .directory(dir.resolve("serve").toFile())
            .redirectErrorStream(true)
            .start();
    try {
      int port = serverPort(server);
      try (EgressProxy proxy = proxy(port)) {
        Map<String, String> env = new HashMap<>(proxy.environment());
        env.put("GIT_TERMINAL_PROMPT", "0");
        Path clone = dir.resolve("clone");
        var r =
            git(
                env,
                dir,
                "clone",
                "-q",
                "http://127.0.0.1:" + port + "/repo.git",
                clone.toString());
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(clone.resolve("README")).hasContent("through the proxy");
        var refused =
            git(
                env,
                dir,
                "clone",
                "-q",
                "http://127.0.0.2:" + port + "/repo.git",
                dir.resolve("no").toString());
        assertThat(refused.status()).isNotZero();
        assertThat(refused.err()).contains("403");
      }
    } finally {
      server.destroyForcibly().waitFor();
    }
  }

  private static EgressProxy proxy(int originPort) {
    return EgressProxy.builder(NetPolicy.allowList(NetRule.allow("127.0.0.1", originPort)))
        .listenOnLoopback()
        .start();
  }

  private static Clients.Run git(Map<String, String> env, Path cwd, String... args)
      throws IOException, InterruptedException {
    String[] command = new String[args.length + 3];
    command[0] = "git";
    command[1] = "-C";
    command[2] = cwd.toString();
    System.arraycopy(args, 0, command, 3, args.length);
    return Clients.run(env, command);
  }

  /** The port python's http.server prints ("Serving HTTP on 127.0.0.1 port N ..."). */
  private static int serverPort(Process server) throws IOException {
    var reader = new java.io.BufferedReader(new java.io.InputStreamReader(server.getInputStream()));
    String line = reader.readLine();
    if (line == null || !line.contains(" port ")) {
      throw new IOException("http.server did not start: " + line);
    }
    String rest = line.substring(line.indexOf(" port ") + 6);
    int port = Integer.parseInt(rest.substring(0, rest.indexOf(' ')));
    Thread.ofPlatform()
        .daemon()
        .start(
            () -> {
              try {
                reader.transferTo(java.io.Writer.nullWriter());
              } catch (IOException e) {
                // the server went away
              }
            });
    return port;
  }
}
