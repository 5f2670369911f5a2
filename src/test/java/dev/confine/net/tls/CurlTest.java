package dev.confine.net.tls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * curl, a child as the proxy meets it, against a Netty server presenting the leaf for localhost
 * (curl connects to 127.0.0.1 and names localhost: {@code --resolve}). curl runs with an empty
 * environment but PATH, so that no proxy or CA variable of this JVM's reaches it.
 */
class CurlTest {
  @TempDir static Path dir;
  private static final CertificateAuthority CA = CertificateAuthority.generate();
  private static TestTlsServer server;
  private static CaBundle bundle;

  @BeforeAll
  static void start() throws Exception {
    HostRequirements.requireProgram("curl");
    server = new TestTlsServer(new MitmContexts(CA).serverContext("localhost"));
    bundle = CaBundle.create(CA, CaBundle.SYSTEM_BUNDLES, dir);
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
    if (bundle != null) {
      bundle.close();
    }
  }

  @BeforeEach
  void forgetEarlierHandshakes() {
    server.forgetHandshakes();
  }

  @Test
  void curlTrustingTheBundleGetsThroughToTheServer() throws Exception {
    Result r = curl(Map.of(), "--cacert", bundle.path().toString());
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).isEqualTo("ok http/1.1");
    assertThat(server.nextHandshake().protocol()).isEqualTo("TLSv1.3");
  }

  @Test
  void curlWithTheBundlesEnvironmentGetsThrough() throws Exception {
    Result r = curl(Map.of("CURL_CA_BUNDLE", bundle.environment().get("CURL_CA_BUNDLE")));
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).isEqualTo("ok http/1.1");
  }

  @Test
  void curlWithItsDefaultStoreRefusesTheLeaf() throws Exception {
    Result r = curl(Map.of());
    assertThat(r.exit()).as(r.err()).isEqualTo(60); // CURLE_PEER_FAILED_VERIFICATION
    assertThat(r.err()).contains("SSL certificate problem");
  }

  /**
   * A client offering TLS 1.1 alone (curl with OpenSSL's security level lowered so that it may) is
   * refused by the server, with the protocol_version alert.
   */
  @Test
  void aTls11OnlyClientIsRefused() throws Exception {
    Result r =
        curl(
            Map.of(),
            "--cacert",
            bundle.path().toString(),
            "--tlsv1.1",
            "--tls-max",
            "1.1",
            "--ciphers",
            "DEFAULT@SECLEVEL=0");
    assertThat(r.exit()).as(r.err()).isEqualTo(35); // CURLE_SSL_CONNECT_ERROR
    assertThat(r.err()).contains("alert protocol version");
    assertThat(server.nextHandshake().failure()).hasMessageContaining("TLSv1.1");
  }

  private record Result(int exit, String out, String err) {}

  private static Result curl(Map<String, String> env, String... options)
      throws IOException, InterruptedException {
    int port = server.port();
    List<String> command =
        new ArrayList<>(
            List.of(
                "curl",
                "--silent",
                "--show-error",
                "--http1.1",
                "--max-time",
                "20",
                "--noproxy",
                "*",
                "--resolve",
                "localhost:" + port + ":127.0.0.1"));
    command.addAll(List.of(options));
    command.add("https://localhost:" + port + "/");
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().clear();
    pb.environment().put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    byte[][] err = new byte[1][];
    Thread reader = Thread.ofVirtual().start(() -> err[0] = readAll(p));
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("curl ended").isTrue();
    reader.join();
    return new Result(p.exitValue(), out, new String(err[0], StandardCharsets.UTF_8));
  }

  private static byte[] readAll(Process p) {
    try {
      return p.getErrorStream().readAllBytes();
    } catch (IOException e) {
      return ("reading curl's stderr failed: " + e).getBytes(StandardCharsets.UTF_8);
    }
  }
}
