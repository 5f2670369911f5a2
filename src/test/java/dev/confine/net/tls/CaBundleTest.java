package dev.confine.net.tls;

import static dev.confine.net.tls.CertificateAuthorityTest.FIXED;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CaBundleTest {
  private static final CertificateAuthority CA = CertificateAuthority.generate(FIXED);
  private static final CertificateAuthority ROOT_A = CertificateAuthority.generate(FIXED);
  private static final CertificateAuthority ROOT_B = CertificateAuthority.generate(FIXED);

  @TempDir Path tmp;

  /** Two system bundles (one without a final newline, with a comment) and a missing one. */
  private List<Path> systemBundles() throws Exception {
    Path etc = Files.createDirectories(tmp.resolve("etc"));
    Path a = Files.writeString(etc.resolve("a.crt"), ROOT_A.pem());
    Path b =
        Files.writeString(
            etc.resolve("b.pem"), "# Root B\n" + ROOT_B.pem().stripTrailing(), US_ASCII);
    return List.of(a, etc.resolve("missing.crt"), b);
  }

  private Path parent() throws Exception {
    return Files.createDirectories(tmp.resolve("run"));
  }

  @Test
  void theBundleIsEachExistingSystemBundleWithANewlineThenTheCa() throws Exception {
    List<Path> system = systemBundles();
    try (CaBundle bundle = CaBundle.create(CA, system, parent())) {
      assertThat(Files.readString(bundle.path(), US_ASCII))
          .isEqualTo(
              ROOT_A.pem() + "\n" + "# Root B\n" + ROOT_B.pem().stripTrailing() + "\n" + CA.pem());
      assertThat(bundle.path().getFileName()).hasToString("ca-bundle.pem");
    }
  }

  @Test
  void withoutSystemBundlesItIsTheCaAlone() throws Exception {
    try (CaBundle bundle = CaBundle.create(CA, List.of(tmp.resolve("none")), parent())) {
      assertThat(Files.readString(bundle.path(), US_ASCII)).isEqualTo(CA.pem());
    }
  }

  @Test
  void aDirectoryWhereABundleWouldBeIsSkipped() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("cert.pem"));
    try (CaBundle bundle = CaBundle.create(CA, List.of(dir), parent())) {
      assertThat(Files.readString(bundle.path(), US_ASCII)).isEqualTo(CA.pem());
    }
  }

  @Test
  void theDirectoryIsPrivateAndTheFilesTheOwnersAlone() throws Exception {
    Path parent = parent();
    try (CaBundle bundle = CaBundle.create(CA, systemBundles(), parent)) {
      Path dir = bundle.directory();
      assertThat(dir.getParent()).isEqualTo(parent);
      assertThat(dir.getFileName().toString()).startsWith("confine-ca-bundle-");
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
          .isEqualTo("rwx------");
      assertThat(bundle.path().getParent()).isEqualTo(dir);
      for (Path file : List.of(bundle.path(), bundle.caFile(), bundle.trustStore())) {
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
            .as(file.toString())
            .isEqualTo("rw-------");
      }
      try (Stream<Path> files = Files.list(dir)) {
        assertThat(files.map(p -> p.getFileName().toString()))
            .containsExactlyInAnyOrder("ca-bundle.pem", "ca.pem", "truststore.p12");
      }
    }
  }

  @Test
  void closeRemovesTheDirectoryAndAgainIsHarmless() throws Exception {
    Path parent = parent();
    CaBundle bundle = CaBundle.create(CA, systemBundles(), parent);
    assertThat(bundle.directory()).isDirectory();
    bundle.close();
    assertThat(bundle.directory()).doesNotExist();
    bundle.close();
    try (Stream<Path> left = Files.list(parent)) {
      assertThat(left).isEmpty();
    }
  }

  @Test
  void theEnvironmentNamesTheFilesForEachClientInOrder() throws Exception {
    try (CaBundle bundle = CaBundle.create(CA, systemBundles(), parent())) {
      String pem = bundle.path().toString();
      assertThat(bundle.environment())
          .containsExactly(
              entry("SSL_CERT_FILE", pem),
              entry("CURL_CA_BUNDLE", pem),
              entry("REQUESTS_CA_BUNDLE", pem),
              entry("NODE_EXTRA_CA_CERTS", bundle.caFile().toString()),
              entry("GIT_SSL_CAINFO", pem),
              entry("PIP_CERT", pem),
              entry(
                  "JAVA_TOOL_OPTIONS",
                  "-Djavax.net.ssl.trustStore="
                      + bundle.trustStore()
                      + " -Djavax.net.ssl.trustStoreType=PKCS12"));
      assertThatThrownBy(() -> bundle.environment().put("X", "y"))
          .isInstanceOf(UnsupportedOperationException.class);
      assertThat(Files.readString(bundle.caFile(), US_ASCII)).isEqualTo(CA.pem());
    }
  }

  @Test
  void theJavaTrustStoreHoldsTheSystemRootsAndTheCaWithoutAPassword() throws Exception {
    try (CaBundle bundle = CaBundle.create(CA, systemBundles(), parent())) {
      KeyStore store = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(bundle.trustStore())) {
        store.load(in, null); // what the JDK does when javax.net.ssl.trustStorePassword is unset
      }
      List<Certificate> held = new ArrayList<>();
      for (String alias : Collections.list(store.aliases())) {
        assertThat(store.isCertificateEntry(alias)).as(alias).isTrue();
        held.add(store.getCertificate(alias));
      }
      assertThat(held)
          .containsExactlyInAnyOrder(CA.certificate(), ROOT_A.certificate(), ROOT_B.certificate());
    }
  }

  @Test
  void aRootInSeveralBundlesIsStoredOnce() throws Exception {
    Path a = Files.writeString(tmp.resolve("a.pem"), ROOT_A.pem());
    Path again = Files.writeString(tmp.resolve("again.pem"), ROOT_A.pem() + CA.pem());
    try (CaBundle bundle = CaBundle.create(CA, List.of(a, again), parent())) {
      KeyStore store = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(bundle.trustStore())) {
        store.load(in, null);
      }
      assertThat(store.size()).isEqualTo(2);
    }
  }

  @Test
  void aSystemBundleTheJdkCannotParseFailsAndLeavesNothing() throws Exception {
    Path bad =
        Files.writeString(
            tmp.resolve("bad.pem"),
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    Path parent = parent();
    assertThatThrownBy(() -> CaBundle.create(CA, List.of(bad), parent))
        .isInstanceOf(TlsMaterialException.class)
        .hasCauseInstanceOf(java.security.cert.CertificateException.class);
    try (Stream<Path> left = Files.list(parent)) {
      assertThat(left).isEmpty();
    }
  }

  @Test
  void byDefaultItReadsTheSystemsBundlesAndWritesBeneathTheTemporaryDirectory() throws Exception {
    assertThat(CaBundle.SYSTEM_BUNDLES)
        .extracting(Path::toString)
        .containsExactly(
            "/etc/ssl/certs/ca-certificates.crt",
            "/etc/pki/tls/certs/ca-bundle.crt",
            "/etc/ssl/ca-bundle.pem",
            "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
            "/etc/ssl/cert.pem");
    try (CaBundle bundle = CaBundle.create(CA)) {
      assertThat(bundle.directory().getParent())
          .isEqualTo(Path.of(System.getProperty("java.io.tmpdir")));
      StringBuilder expected = new StringBuilder();
      for (Path p : CaBundle.SYSTEM_BUNDLES) {
        if (Files.isRegularFile(p)) {
          expected
              .append(Files.readString(p, java.nio.charset.StandardCharsets.ISO_8859_1))
              .append('\n');
        }
      }
      expected.append(CA.pem());
      assertThat(Files.readString(bundle.path(), java.nio.charset.StandardCharsets.ISO_8859_1))
          .isEqualTo(expected.toString());
    }
  }

  @Test
  void aPathGoesInJavaToolOptionsQuotedWhenItMustBe() {
    assertThat(CaBundle.javaOptionValue("/tmp/a/truststore.p12"))
        .isEqualTo("/tmp/a/truststore.p12");
    assertThat(CaBundle.javaOptionValue("/tmp/a b/t.p12")).isEqualTo("\"/tmp/a b/t.p12\"");
    assertThat(CaBundle.javaOptionValue("/tmp/a\"b/t.p12")).isEqualTo("'/tmp/a\"b/t.p12'");
    assertThatThrownBy(() -> CaBundle.javaOptionValue("/tmp/'\"/t.p12"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static java.util.Map.Entry<String, String> entry(String k, String v) {
    return java.util.Map.entry(k, v);
  }
}
