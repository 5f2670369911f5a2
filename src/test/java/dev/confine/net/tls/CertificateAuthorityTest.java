package dev.confine.net.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Date;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.junit.jupiter.api.Test;

class CertificateAuthorityTest {
  /** A now with a fraction of a second, which certificates drop. */
  static final Instant NOW = Instant.parse("2026-03-04T05:06:07.890Z");

  static final Clock FIXED = Clock.fixed(NOW, ZoneOffset.UTC);

  private static final String KEY_USAGE = "2.5.29.15";
  private static final String BASIC_CONSTRAINTS = "2.5.29.19";
  private static final String SUBJECT_KEY_ID = "2.5.29.14";

  @Test
  void theCaIsSelfSignedAndNamedAsTheProxysTemporaryCa() throws Exception {
    X509Certificate ca = CertificateAuthority.generate(FIXED).certificate();
    assertThat(ca.getSubjectX500Principal().getName())
        .isEqualTo("CN=Confine egress proxy temporary CA");
    assertThat(ca.getIssuerX500Principal()).isEqualTo(ca.getSubjectX500Principal());
    ca.verify(ca.getPublicKey()); // throws unless it signed itself
    assertThat(ca.getSigAlgName()).isEqualTo("SHA256withECDSA");
  }

  @Test
  void itIsValidFromAnHourBeforeItsMakingForADay() {
    X509Certificate ca = CertificateAuthority.generate(FIXED).certificate();
    assertThat(ca.getNotBefore()).isEqualTo(Date.from(Instant.parse("2026-03-04T04:06:07Z")));
    assertThat(ca.getNotAfter()).isEqualTo(Date.from(Instant.parse("2026-03-05T05:06:07Z")));
  }

  @Test
  void withTheSystemClockItIsValidNow() throws Exception {
    X509Certificate ca = CertificateAuthority.generate().certificate();
    ca.checkValidity();
    ca.checkValidity(Date.from(Instant.now().plusSeconds(23 * 3600)));
  }

  @Test
  void itsKeyIsAnEcP256Key() {
    X509Certificate ca = CertificateAuthority.generate(FIXED).certificate();
    assertThat(ca.getPublicKey()).isInstanceOf(ECPublicKey.class);
    ECPublicKey key = (ECPublicKey) ca.getPublicKey();
    assertThat(key.getParams().getCurve().getField().getFieldSize()).isEqualTo(256);
    assertThat(key.getParams().toString()).contains("secp256r1");
  }

  @Test
  void itSignsCertificatesOnlyAndIsACaBothCritically() {
    X509Certificate ca = CertificateAuthority.generate(FIXED).certificate();
    // digitalSignature(0), nonRepudiation(1), keyEncipherment(2), dataEncipherment(3),
    // keyAgreement(4), keyCertSign(5), cRLSign(6), encipherOnly(7), decipherOnly(8)
    assertThat(ca.getKeyUsage())
        .startsWith(true, false, false, false, false, true, false, false, false);
    assertThat(ca.getBasicConstraints())
        .as("a CA without a path length")
        .isEqualTo(Integer.MAX_VALUE);
    assertThat(ca.getCriticalExtensionOIDs()).contains(KEY_USAGE, BASIC_CONSTRAINTS);
  }

  @Test
  void itsSerialIsARandomPositive128BitNumber() {
    X509Certificate a = CertificateAuthority.generate(FIXED).certificate();
    X509Certificate b = CertificateAuthority.generate(FIXED).certificate();
    assertThat(a.getSerialNumber().signum()).isPositive();
    assertThat(a.getSerialNumber().bitLength()).isEqualTo(128);
    assertThat(b.getSerialNumber().bitLength()).isEqualTo(128);
    assertThat(a.getSerialNumber()).isNotEqualTo(b.getSerialNumber());
  }

  @Test
  void itHasTheSubjectKeyIdentifierOfItsKey() throws Exception {
    X509Certificate ca = CertificateAuthority.generate(FIXED).certificate();
    assertThat(ca.getNonCriticalExtensionOIDs()).contains(SUBJECT_KEY_ID);
    SubjectKeyIdentifier id =
        SubjectKeyIdentifier.getInstance(
            JcaX509ExtensionUtils.parseExtensionValue(ca.getExtensionValue(SUBJECT_KEY_ID)));
    assertThat(id.getKeyIdentifier())
        .isEqualTo(
            new JcaX509ExtensionUtils()
                .createSubjectKeyIdentifier(ca.getPublicKey())
                .getKeyIdentifier());
  }

  @Test
  void eachCaIsFresh() {
    CertificateAuthority a = CertificateAuthority.generate(FIXED);
    CertificateAuthority b = CertificateAuthority.generate(FIXED);
    assertThat(a.certificate().getPublicKey()).isNotEqualTo(b.certificate().getPublicKey());
  }

  @Test
  void itsPemParsesBackToTheCertificate() throws Exception {
    CertificateAuthority ca = CertificateAuthority.generate(FIXED);
    assertThat(ca.pem())
        .startsWith("-----BEGIN CERTIFICATE-----")
        .endsWith("-----END CERTIFICATE-----" + System.lineSeparator());
    X509Certificate parsed =
        (X509Certificate)
            CertificateFactory.getInstance("X.509")
                .generateCertificate(
                    new ByteArrayInputStream(ca.pem().getBytes(StandardCharsets.US_ASCII)));
    assertThat(parsed).isEqualTo(ca.certificate());
  }
}
