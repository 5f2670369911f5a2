package dev.confine.net.tls;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.WRITE;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.SequencedMap;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The files a child is pointed at so that it trusts the proxy's CA as well as the system's roots,
 * in a private directory of their own ({@code confine-ca-bundle-*}, mode 0700) that {@link #close}
 * removes. Each file is created with mode 0600 in the one call that creates it.
 *
 * <ul>
 *   <li>{@code ca-bundle.pem} ({@link #path}): every system bundle that exists, each followed by a
 *       newline, then the CA's PEM; for OpenSSL, curl, Python, git, pip and Go.
 *   <li>{@code ca.pem}: the CA's PEM alone, for Node, which adds it to its own roots.
 *   <li>{@code truststore.p12}: a password-less PKCS12 trust store for Java, holding the
 *       certificates of the system bundles (as the JDK's {@link CertificateFactory} parses them)
 *       and the CA; not the JDK's own {@code cacerts}.
 * </ul>
 *
 * <p>{@link #environment} names the variables that point a child at them.
 */
public final class CaBundle implements AutoCloseable {
  /**
   * Where the distributions keep their PEM bundle of roots: Debian and Ubuntu, Fedora and RHEL (old
   * and new layout), openSUSE, Alpine and others.
   */
  static final List<Path> SYSTEM_BUNDLES =
      List.of(
          Path.of("/etc/ssl/certs/ca-certificates.crt"),
          Path.of("/etc/pki/tls/certs/ca-bundle.crt"),
          Path.of("/etc/ssl/ca-bundle.pem"),
          Path.of("/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"),
          Path.of("/etc/ssl/cert.pem"));

  static final String BUNDLE_FILE = "ca-bundle.pem";
  static final String CA_FILE = "ca.pem";
  static final String TRUST_STORE_FILE = "truststore.p12";
  static final String DIRECTORY_PREFIX = "confine-ca-bundle-";

  private final Path directory;
  private final SequencedMap<String, String> environment;

  private CaBundle(Path directory) {
    this.directory = directory;
    SequencedMap<String, String> env = new LinkedHashMap<>();
    String bundle = path().toString();
    env.put("SSL_CERT_FILE", bundle);
    env.put("CURL_CA_BUNDLE", bundle);
    env.put("REQUESTS_CA_BUNDLE", bundle);
    env.put("NODE_EXTRA_CA_CERTS", caFile().toString());
    env.put("GIT_SSL_CAINFO", bundle);
    env.put("PIP_CERT", bundle);
    env.put(
        "JAVA_TOOL_OPTIONS",
        "-Djavax.net.ssl.trustStore="
            + javaOptionValue(trustStore().toString())
            + " -Djavax.net.ssl.trustStoreType=PKCS12");
    this.environment = Collections.unmodifiableSequencedMap(env);
  }

  /**
   * Writes the bundle of {@code ca} and the system bundles that exist ({@link #SYSTEM_BUNDLES}) in
   * a new directory beneath {@code java.io.tmpdir}.
   *
   * @throws UncheckedIOException when a file cannot be read or written (nothing is left behind)
   * @throws TlsMaterialException when a system bundle holds what the JDK cannot parse as
   *     certificates
   */
  public static CaBundle create(CertificateAuthority ca) {
    return create(ca, SYSTEM_BUNDLES, Path.of(System.getProperty("java.io.tmpdir")));
  }

  /**
   * Writes the bundle of {@code ca} and those of {@code systemBundles} that exist, in order, in a
   * new directory beneath {@code parent}.
   */
  static CaBundle create(CertificateAuthority ca, List<Path> systemBundles, Path parent) {
    List<byte[]> existing = new ArrayList<>();
    for (Path p : systemBundles) {
      byte[] read = readIfExists(p);
      if (read != null) {
        existing.add(read);
      }
    }
    byte[] caPem = ca.pem().getBytes(US_ASCII);
    ByteArrayOutputStream bundle = new ByteArrayOutputStream();
    for (byte[] b : existing) {
      bundle.writeBytes(b);
      bundle.write('\n');
    }
    bundle.writeBytes(caPem);
    byte[] trustStore = trustStore(existing, ca);

    Path directory;
    try {
      directory =
          Files.createTempDirectory(
              parent,
              DIRECTORY_PREFIX,
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot make the CA bundle's directory in " + parent, e);
    }
    try {
      CaBundle made = new CaBundle(directory);
      writeNew(made.path(), bundle.toByteArray());
      writeNew(made.caFile(), caPem);
      writeNew(made.trustStore(), trustStore);
      return made;
    } catch (IOException e) {
      UncheckedIOException failure =
          new UncheckedIOException("cannot write the CA bundle in " + directory, e);
      removeAfterFailure(directory, failure);
      throw failure;
    } catch (RuntimeException e) {
      removeAfterFailure(directory, e);
      throw e;
    }
  }

  private static void removeAfterFailure(Path directory, RuntimeException failure) {
    try {
      deleteTree(directory);
    } catch (IOException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /** The PEM bundle: the system's roots, then the proxy's CA. */
  public Path path() {
    return directory.resolve(BUNDLE_FILE);
  }

  /** The private directory that holds the files. */
  public Path directory() {
    return directory;
  }

  /** The CA's PEM alone. */
  Path caFile() {
    return directory.resolve(CA_FILE);
  }

  /** The PKCS12 trust store for Java. */
  Path trustStore() {
    return directory.resolve(TRUST_STORE_FILE);
  }

  /**
   * The variables that make a child trust the bundle, in a fixed order (immutable): {@code
   * SSL_CERT_FILE} (OpenSSL and what links it, Go, Ruby, Python's {@code ssl}), {@code
   * CURL_CA_BUNDLE}, {@code REQUESTS_CA_BUNDLE} (Python requests), {@code NODE_EXTRA_CA_CERTS}
   * (Node; the CA alone, added to Node's own roots), {@code GIT_SSL_CAINFO}, {@code PIP_CERT}, and
   * {@code JAVA_TOOL_OPTIONS} for Java.
   *
   * <p>{@code JAVA_TOOL_OPTIONS} is {@code -Djavax.net.ssl.trustStore=<truststore.p12>
   * -Djavax.net.ssl.trustStoreType=PKCS12} (no password: the store has none). Every JVM reads that
   * variable (JDK 8 on, the {@code java} launcher and the tools, javac and keytool, and JVMs
   * embedded through JNI) and each prints {@code Picked up JAVA_TOOL_OPTIONS: …} on its stderr.
   * {@code JDK_JAVA_OPTIONS} was the alternative: only the {@code java} launcher of JDK 9 and later
   * reads it, and it prints {@code NOTE: Picked up JDK_JAVA_OPTIONS: …} on stderr just the same, so
   * it reaches fewer JVMs for no quieter a start. A child that has its own {@code
   * JAVA_TOOL_OPTIONS} should get both: this value first, its own after (the last {@code -D} of a
   * property wins, so the child's own trust store setting stays its own).
   */
  public SequencedMap<String, String> environment() {
    return environment;
  }

  /** Removes the directory and its files; again is a no-op. */
  @Override
  public void close() {
    try {
      deleteTree(directory);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove the CA bundle's directory " + directory, e);
    }
  }

  private static void deleteTree(Path directory) throws IOException {
    if (!Files.exists(directory)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(directory)) {
      for (Path p : walk.sorted(Collections.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /** The bytes of {@code p} when it is a file that exists (a link to one included), else null. */
  private static byte[] readIfExists(Path p) {
    if (!Files.isRegularFile(p)) {
      return null;
    }
    try {
      return Files.readAllBytes(p);
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the system CA bundle " + p, e);
    }
  }

  /**
   * A password-less PKCS12 trust store of the certificates in {@code bundles} (each once) and the
   * CA.
   */
  private static byte[] trustStore(List<byte[]> bundles, CertificateAuthority ca) {
    try {
      CertificateFactory factory = CertificateFactory.getInstance("X.509");
      Set<Certificate> roots = new LinkedHashSet<>();
      for (byte[] b : bundles) {
        roots.addAll(factory.generateCertificates(new ByteArrayInputStream(b)));
      }
      roots.remove(ca.certificate());
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setCertificateEntry("confine-proxy-ca", ca.certificate());
      int i = 0;
      for (Certificate c : roots) {
        store.setCertificateEntry("system-" + i++, c);
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      store.store(out, null);
      return out.toByteArray();
    } catch (CertificateException e) {
      throw new TlsMaterialException(
          "cannot parse the system CA bundles' certificates for the Java trust store", e);
    } catch (GeneralSecurityException e) {
      throw new TlsMaterialException("cannot make the Java trust store", e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot make the Java trust store", e);
    }
  }

  /** Creates {@code file} with mode 0600 (in the creating call) and writes {@code data}. */
  private static void writeNew(Path file, byte[] data) throws IOException {
    try (SeekableByteChannel out =
        Files.newByteChannel(
            file,
            Set.of(CREATE_NEW, WRITE),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
      ByteBuffer buffer = ByteBuffer.wrap(data);
      while (buffer.hasRemaining()) {
        out.write(buffer);
      }
    }
  }

  /**
   * {@code value} as one word of {@code JAVA_TOOL_OPTIONS}, which the JVM splits at white space and
   * where quotes group: as it is when it needs none, else in the quotes it does not contain.
   */
  static String javaOptionValue(String value) {
    if (value.chars().noneMatch(c -> Character.isWhitespace(c) || c == '"' || c == '\'')) {
      return value;
    }
    if (value.indexOf('"') < 0) {
      return '"' + value + '"';
    }
    if (value.indexOf('\'') < 0) {
      return '\'' + value + '\'';
    }
    throw new IllegalArgumentException(
        "a path with both kinds of quote cannot go in JAVA_TOOL_OPTIONS: " + value);
  }
}
