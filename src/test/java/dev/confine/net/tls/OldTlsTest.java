package dev.confine.net.tls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.testing.ForkedJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The server context itself refuses TLS 1.1 and 1.0, not only the JDK's default {@code
 * jdk.tls.disabledAlgorithms}: in a JVM whose security properties allow them (and where Netty's
 * default protocols would then include them), a client offering one alone is refused by the server
 * for its version. In this test's own JVM the JDK would refuse them before the server is asked.
 */
class OldTlsTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"TLSv1.1", "TLSv1"})
  void theServerRefusesAClientOfferingOnlyAnOldVersion(String version) throws Exception {
    Path relaxed =
        Files.writeString(dir.resolve("relaxed.security"), "jdk.tls.disabledAlgorithms=NULL\n");
    ForkedJvm.Outcome r =
        ForkedJvm.java(
            List.of(
                "-Djava.security.properties=" + relaxed,
                "-cp",
                System.getProperty("java.class.path"),
                OldTlsProbe.class.getName(),
                version),
            Duration.ofSeconds(60));
    assertThat(r.exitCode()).as(r.output()).isZero();
    assertThat(r.output())
        .contains("client: failed javax.net.ssl.SSLHandshakeException: (protocol_version)")
        .contains(
            "server: failed javax.net.ssl.SSLHandshakeException: (protocol_version) The client"
                + " supported protocol versions ["
                + version
                + "] are not accepted by server preferences [TLSv1.3, TLSv1.2]");
  }
}
