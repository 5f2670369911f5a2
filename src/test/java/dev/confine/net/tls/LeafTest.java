package dev.confine.net.tls;

import static dev.confine.net.tls.CertificateAuthorityTest.FIXED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.cert.CertPath;
import java.security.cert.CertPathValidator;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Set;
import org.bouncycastle.asn1.x509.AuthorityKeyIdentifier;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The leaves a CA issues, one per host ({@link CertificateAuthority#issue}). */
class LeafTest {
  private static final int DNS = 2;
  private static final int IP = 7;
  private static final CertificateAuthority CA = CertificateAuthority.generate(FIXED);

  @Test
  void aHostNameIsTheCommonNameAndTheDnsSubjectAlternativeName() throws Exception {
    X509Certificate leaf = CA.issue("api.example.com").certificate();
    assertThat(leaf.getSubjectX500Principal().getName()).isEqualTo("CN=api.example.com");
    assertThat(leaf.getSubjectAlternativeNames()).containsExactly(List.of(DNS, "api.example.com"));
  }

  @ParameterizedTest
  @CsvSource({
    "127.0.0.1, 127.0.0.1",
    "10.20.30.40, 10.20.30.40",
    "::1, 0:0:0:0:0:0:0:1",
    "2001:db8::5, 2001:db8:0:0:0:0:0:5",
    "[::1], 0:0:0:0:0:0:0:1",
  })
  void anIpLiteralIsAnIpSubjectAlternativeName(String host, String shown) throws Exception {
    X509Certificate leaf = CA.issue(host).certificate();
    assertThat(leaf.getSubjectAlternativeNames()).containsExactly(List.of(IP, shown));
    assertThat(leaf.getSubjectX500Principal().getName()).isEqualTo("CN=" + host);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"localhost", "1.2.3", "256.1.1.1", "host-1.internal", "xn--bcher-kva.example"})
  void whatIsNotAnIpLiteralIsADnsName(String host) throws Exception {
    assertThat(CA.issue(host).certificate().getSubjectAlternativeNames())
        .containsExactly(List.of(DNS, host));
  }

  @Test
  void aLeafIsValidFromAnHourBeforeNowFor23Hours() {
    X509Certificate leaf = CA.issue("example.com").certificate();
    assertThat(leaf.getNotBefore()).isEqualTo(Date.from(Instant.parse("2026-03-04T04:06:07Z")));
    assertThat(leaf.getNotAfter()).isEqualTo(Date.from(Instant.parse("2026-03-05T04:06:07Z")));
  }

  @Test
  void aLeafNeverOutlivesItsCa() {
    MutableClock clock = new MutableClock(CertificateAuthorityTest.NOW);
    CertificateAuthority ca = CertificateAuthority.generate(clock);
    clock.advance(Duration.ofHours(2));
    X509Certificate leaf = ca.issue("example.com").certificate();
    assertThat(leaf.getNotBefore()).isEqualTo(Date.from(Instant.parse("2026-03-04T06:06:07Z")));
    assertThat(leaf.getNotAfter()).isEqualTo(ca.certificate().getNotAfter());
  }

  @Test
  void aLeafServesTlsServersOnly() throws Exception {
    X509Certificate leaf = CA.issue("example.com").certificate();
    assertThat(leaf.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.1"); // serverAuth
    // digitalSignature(0) and keyEncipherment(2), critical
    assertThat(leaf.getKeyUsage()).startsWith(true, false, true, false, false, false, false);
    assertThat(leaf.getCriticalExtensionOIDs()).contains("2.5.29.15");
    assertThat(leaf.getBasicConstraints()).as("not a CA").isEqualTo(-1);
  }

  @Test
  void aLeafNamesItsCaByNameAndKeyIdentifier() throws Exception {
    X509Certificate ca = CA.certificate();
    X509Certificate leaf = CA.issue("example.com").certificate();
    assertThat(leaf.getIssuerX500Principal()).isEqualTo(ca.getSubjectX500Principal());
    AuthorityKeyIdentifier aki =
        AuthorityKeyIdentifier.getInstance(
            JcaX509ExtensionUtils.parseExtensionValue(leaf.getExtensionValue("2.5.29.35")));
    SubjectKeyIdentifier ski =
        SubjectKeyIdentifier.getInstance(
            JcaX509ExtensionUtils.parseExtensionValue(ca.getExtensionValue("2.5.29.14")));
    assertThat(aki.getKeyIdentifierOctets()).isEqualTo(ski.getKeyIdentifier());
  }

  @Test
  void theChainIsTheLeafThenTheCa() {
    Leaf leaf = CA.issue("example.com");
    assertThat(leaf.chain()).hasSize(2);
    assertThat(leaf.chain().get(1)).isEqualTo(CA.certificate());
    assertThat(leaf.certificate().getSerialNumber().bitLength()).isEqualTo(128);
  }

  @Test
  void theChainVerifiesToTheCaAlone() throws Exception {
    Leaf leaf = CA.issue("example.com");
    validate(leaf, CA.certificate(), FIXED.instant());
  }

  @Test
  void theChainDoesNotVerifyToAnotherCa() {
    Leaf leaf = CA.issue("example.com");
    X509Certificate other = CertificateAuthority.generate(FIXED).certificate();
    assertThatThrownBy(() -> validate(leaf, other, FIXED.instant()))
        .isInstanceOf(CertPathValidatorException.class);
  }

  @Test
  void eachLeafHasAKeyOfItsOwn() {
    Leaf a = CA.issue("example.com");
    Leaf b = CA.issue("example.com");
    assertThat(a.key()).isNotEqualTo(b.key());
    assertThat(a.certificate().getPublicKey()).isNotEqualTo(b.certificate().getPublicKey());
    assertThat(a.certificate().getPublicKey()).isNotEqualTo(CA.certificate().getPublicKey());
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "\t\n"})
  void aBlankHostIsRefused(String host) {
    assertThatThrownBy(() -> CA.issue(host)).isInstanceOf(IllegalArgumentException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"bücher.example", "a b.example", "tab\there"})
  void aHostThatIsNotPrintableAsciiIsRefused(String host) {
    assertThatThrownBy(() -> CA.issue(host))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not printable ASCII");
  }

  @Test
  void aNullHostIsRefused() {
    assertThatThrownBy(() -> CA.issue(null)).isInstanceOf(NullPointerException.class);
  }

  /** Validates the chain as a client would that trusts {@code root} alone, without revocation. */
  static void validate(Leaf leaf, X509Certificate root, Instant at) throws Exception {
    CertPath path =
        CertificateFactory.getInstance("X.509").generateCertPath(List.of(leaf.certificate()));
    PKIXParameters params = new PKIXParameters(Set.of(new TrustAnchor(root, null)));
    params.setRevocationEnabled(false);
    params.setDate(Date.from(at));
    CertPathValidator.getInstance("PKIX").validate(path, params);
  }
}
