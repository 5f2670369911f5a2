package dev.confine.net.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Java child (a JVM of its own) trusts the proxy's leaf through the {@code JAVA_TOOL_OPTIONS} of
 * {@link CaBundle#environment()} alone, and not without it.
 */
class JavaTrustTest {
  @TempDir static Path dir;
  private static final CertificateAuthority CA = CertificateAuthority.generate();
  private static TestTlsServer server;
  private static CaBundle bundle;

  @BeforeAll
  static void start() throws Exception {
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

  @Test
  void javaToolOptionsMakeAJavaChildTrustTheLeaf() throws Exception {
    String options = bundle.environment().get("JAVA_TOOL_OPTIONS");
    Result r = probe(Map.of("JAVA_TOOL_OPTIONS", options));
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).isEqualTo("TLSv1.3 CN=localhost\n");
    // The trade-off: every JVM names the variable on its stderr.
    assertThat(r.err()).isEqualTo("Picked up JAVA_TOOL_OPTIONS: " + options + "\n");
  }

  @Test
  void withoutThemTheJavaChildRefusesTheLeaf() throws Exception {
    Result r = probe(Map.of());
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("PKIX path building failed");
  }

  private record Result(int exit, String out, String err) {}

  private static Result probe(Map<String, String> env) throws IOException, InterruptedException {
    ProcessBuilder pb =
        new ProcessBuilder(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                TrustProbe.class.getName(),
                "localhost",
                Integer.toString(server.port())));
    pb.environment().keySet().removeIf(k -> k.startsWith("JAVA_") || k.startsWith("JDK_JAVA_"));
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    byte[][] err = new byte[1][];
    Thread reader =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    err[0] = p.getErrorStream().readAllBytes();
                  } catch (IOException e) {
                    err[0] = ("reading stderr failed: " + e).getBytes(StandardCharsets.UTF_8);
                  }
                });
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the child JVM ended").isTrue();
    reader.join();
    return new Result(p.exitValue(), out, new String(err[0], StandardCharsets.UTF_8));
  }
}
