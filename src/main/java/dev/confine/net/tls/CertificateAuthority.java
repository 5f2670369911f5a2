package dev.confine.net.tls;

import io.netty.util.NetUtil;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import org.bouncycastle.asn1.DEROctetString;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The certificate authority of one proxy instance: made fresh for each proxy, never stored, it
 * signs the leaf certificates the proxy presents to a child for the hosts it intercepts.
 *
 * <p>The CA is self-signed, named {@value #COMMON_NAME}, with an ECDSA P-256 key held in memory
 * only. It is valid from an hour before it was made (a child's clock may lag) for 24 hours after: a
 * proxy outliving that needs a new instance. Its key usage (critical) is keyCertSign and
 * digitalSignature, its basic constraints (critical) say CA, it has a random positive 128-bit
 * serial and a subject key identifier.
 *
 * <p>Keys come from the JDK (SunEC), and so do signatures (SHA256withECDSA); BouncyCastle builds
 * the certificates and writes PEM. Instances are immutable and thread-safe.
 */
public final class CertificateAuthority {
  /** The CA's common name, as a child's trust store lists it. */
  static final String COMMON_NAME = "Confine egress proxy temporary CA";

  /** How far before their making the CA and the leaves become valid. */
  static final Duration BACKDATE = Duration.ofHours(1);

  /** How long after its making the CA is valid. */
  static final Duration CA_VALIDITY = Duration.ofHours(24);

  /** How long after its making a leaf is valid (never past the CA's end). */
  static final Duration LEAF_VALIDITY = Duration.ofHours(23);

  private static final String SIGNATURE_ALGORITHM = "SHA256withECDSA";
  private static final String CURVE = "secp256r1";

  private final Clock clock;
  private final SecureRandom random;
  private final KeyPair keys;
  private final X509Certificate certificate;
  private final String pem;

  private CertificateAuthority(
      Clock clock, SecureRandom random, KeyPair keys, X509Certificate certificate) {
    this.clock = clock;
    this.random = random;
    this.keys = keys;
    this.certificate = certificate;
    this.pem = toPem(certificate);
  }

  /** A new CA whose validity starts from the system clock's now. */
  public static CertificateAuthority generate() {
    return generate(Clock.systemUTC());
  }

  /**
   * A new CA whose validity, and that of the leaves it issues, starts from {@code clock}'s now
   * (truncated to the second, the precision of a certificate's dates).
   */
  static CertificateAuthority generate(Clock clock) {
    Objects.requireNonNull(clock, "clock");
    SecureRandom random = new SecureRandom();
    KeyPair keys = newKeyPair(random);
    Instant now = now(clock);
    X500Name name = commonName(COMMON_NAME);
    try {
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
                  name,
                  serial(random),
                  Date.from(now.minus(BACKDATE)),
                  Date.from(now.plus(CA_VALIDITY)),
                  name,
                  keys.getPublic())
              .addExtension(
                  Extension.keyUsage,
                  true,
                  new KeyUsage(KeyUsage.keyCertSign | KeyUsage.digitalSignature))
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
              .addExtension(
                  Extension.subjectKeyIdentifier,
                  false,
                  extensions.createSubjectKeyIdentifier(keys.getPublic()));
      return new CertificateAuthority(
          clock, random, keys, sign(builder, keys.getPrivate(), "the CA"));
    } catch (GeneralSecurityException | CertIOException e) {
      throw new TlsMaterialException("cannot make the proxy's CA certificate", e);
    }
  }

  /** The CA's certificate, which a child trusts to accept the proxy's leaves. */
  public X509Certificate certificate() {
    return certificate;
  }

  /** The CA's certificate in PEM ({@code -----BEGIN CERTIFICATE-----}), ending in a newline. */
  public String pem() {
    return pem;
  }

  /**
   * A new leaf certificate for {@code host}, signed by this CA, with a fresh P-256 key; not cached
   * (that is {@link MitmContexts}'s job).
   *
   * <p>Its common name is {@code host} as given. Its subject alternative name is the IP address
   * when {@code host} is an IPv4 or IPv6 literal (brackets and a zone allowed; parsed as a literal,
   * never looked up) and otherwise the DNS name {@code host}. It is valid from an hour before now
   * for 23 hours, and never past the CA's own end. Key usage (critical): digitalSignature and
   * keyEncipherment; extended key usage: serverAuth; an authority key identifier naming this CA's
   * key.
   *
   * @throws IllegalArgumentException when {@code host} is blank or not printable ASCII (an
   *     internationalised name goes as its A-label, {@code xn--…})
   */
  Leaf issue(String host) {
    checkHost(host);
    KeyPair leafKeys = newKeyPair(random);
    Instant now = now(clock);
    Instant notAfter = now.plus(LEAF_VALIDITY);
    Instant caNotAfter = certificate.getNotAfter().toInstant();
    if (notAfter.isAfter(caNotAfter)) {
      notAfter = caNotAfter;
    }
    byte[] ip = NetUtil.createByteArrayFromIpAddressString(host);
    GeneralName san =
        ip != null
            ? new GeneralName(GeneralName.iPAddress, new DEROctetString(ip))
            : new GeneralName(GeneralName.dNSName, host);
    try {
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
                  certificate,
                  serial(random),
                  Date.from(now.minus(BACKDATE)),
                  Date.from(notAfter),
                  commonName(host),
                  leafKeys.getPublic())
              .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(san))
              .addExtension(
                  Extension.keyUsage,
                  true,
                  new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment))
              .addExtension(
                  Extension.extendedKeyUsage,
                  false,
                  new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth))
              .addExtension(
                  Extension.authorityKeyIdentifier,
                  false,
                  extensions.createAuthorityKeyIdentifier(certificate));
      X509Certificate leaf = sign(builder, keys.getPrivate(), "a leaf for " + host);
      return new Leaf(leafKeys.getPrivate(), List.of(leaf, certificate));
    } catch (GeneralSecurityException | CertIOException e) {
      throw new TlsMaterialException("cannot make a leaf certificate for " + host, e);
    }
  }

  /**
   * Checks that {@code host} can name a leaf: not null, not blank, printable ASCII.
   *
   * @throws IllegalArgumentException when it cannot
   */
  static void checkHost(String host) {
    Objects.requireNonNull(host, "host");
    if (host.isBlank()) {
      throw new IllegalArgumentException("a leaf certificate needs a host, not a blank string");
    }
    if (!host.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      throw new IllegalArgumentException(
          "host is not printable ASCII (an internationalised name goes as its A-label): " + host);
    }
  }

  /** Now by this CA's clock, to the second. */
  Instant now() {
    return now(clock);
  }

  private static Instant now(Clock clock) {
    return clock.instant().truncatedTo(ChronoUnit.SECONDS);
  }

  private static X500Name commonName(String cn) {
    return new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, cn).build();
  }

  /** A random positive serial of exactly 128 bits (the top one set, 127 random). */
  private static BigInteger serial(SecureRandom random) {
    return new BigInteger(128, random).setBit(127);
  }

  private static KeyPair newKeyPair(SecureRandom random) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec(CURVE), random);
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new TlsMaterialException("cannot make an EC P-256 key", e);
    }
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey by, String what)
      throws GeneralSecurityException {
    try {
      return new JcaX509CertificateConverter()
          .getCertificate(
              builder.build(new JcaContentSignerBuilder(SIGNATURE_ALGORITHM).build(by)));
    } catch (OperatorCreationException e) {
      throw new TlsMaterialException("cannot sign " + what + " with " + SIGNATURE_ALGORITHM, e);
    }
  }

  private static String toPem(X509Certificate certificate) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter pem = new JcaPEMWriter(out)) {
      pem.writeObject(certificate);
    } catch (IOException e) {
      throw new TlsMaterialException("cannot write the CA certificate as PEM", e);
    }
    return out.toString();
  }
}
