package dev.confine.net.tls;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * A leaf certificate the proxy presents for one host, with its key and the chain a server sends.
 *
 * @param key the leaf's private key (in memory only)
 * @param chain the leaf, then the CA that signed it
 */
record Leaf(PrivateKey key, List<X509Certificate> chain) {
  Leaf {
    chain = List.copyOf(chain);
  }

  /** The leaf certificate itself, the chain's first. */
  X509Certificate certificate() {
    return chain.getFirst();
  }
}
