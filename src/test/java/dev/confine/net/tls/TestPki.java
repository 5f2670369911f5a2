package dev.confine.net.tls;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Base64;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;

/**
 * A server certificate for a test's TLS server that is not the proxy (an {@code https://} upstream
 * proxy, an origin): a fresh CA and a leaf it signs for one host, written as PEM files that servers
 * such as stunnel read.
 *
 * @param ca the CA's certificate, which the server's clients trust
 * @param chain the leaf and the CA, PEM, in that order
 * @param key the leaf's private key, PEM
 * @param server a server TLS context presenting the leaf, for a JDK server
 */
public record TestPki(X509Certificate ca, Path chain, Path key, SSLContext server) {

  /** Issues a leaf for {@code host} (a name, or an IP literal for an IP SAN) into {@code dir}. */
  public static TestPki issue(String host, Path dir) {
    CertificateAuthority authority = CertificateAuthority.generate();
    Leaf leaf = authority.issue(host);
    Path chain = dir.resolve("chain.pem");
    Path key = dir.resolve("key.pem");
    try {
      Files.writeString(chain, pem(leaf.chain().toArray()));
      // PKCS#8, which every TLS library reads.
      Files.writeString(
          key,
          "-----BEGIN PRIVATE KEY-----\n"
              + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(leaf.key().getEncoded())
              + "\n-----END PRIVATE KEY-----\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      char[] password = "test".toCharArray();
      store.setKeyEntry("leaf", leaf.key(), password, leaf.chain().toArray(new Certificate[0]));
      KeyManagerFactory keys =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(store, password);
      SSLContext server = SSLContext.getInstance("TLS");
      server.init(keys.getKeyManagers(), null, null);
      return new TestPki(authority.certificate(), chain, key, server);
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String pem(Object... objects) throws IOException {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      for (Object o : objects) {
        writer.writeObject(o);
      }
    }
    return out.toString();
  }
}
