/**
 * Confine: run a command under an enforced policy.
 *
 * <p>The API is {@code dev.confine} (policies, requests, results, runners and their decorators),
 * {@code dev.confine.session} (interactive and streaming process sessions), {@code
 * dev.confine.local} (the local backend), {@code dev.confine.confined} (the confined backend) and
 * {@code dev.confine.testing} (test doubles for your own tests: a runner, a session manager and a
 * session that run nothing). What the host backends share ({@code dev.confine.host}), the engine
 * ({@code dev.confine.linux} and its packages by job, its generated libc bindings in {@code
 * dev.confine.linux.libc}), the egress proxy's TLS interception material ({@code
 * dev.confine.net.tls}) and the {@code confine} command ({@code dev.confine.cli}) are internal:
 * they are not exported and may change in any release.
 *
 * <p>The engine calls libc through the Foreign Function &amp; Memory API: on the module path start
 * java with {@code --enable-native-access=dev.confine} (on the class path, {@code
 * --enable-native-access=ALL-UNNAMED}).
 */
module dev.confine {
  requires org.slf4j;

  // The egress proxy (dev.confine.net..): Netty, on the JDK's TLS; BouncyCastle builds the
  // certificates of its TLS interception (never registered as a JCA provider).
  requires io.netty.common;
  requires io.netty.handler;
  requires org.bouncycastle.pkix;
  requires org.bouncycastle.provider;

  // Only the confine command (dev.confine.cli) uses picocli; the pom makes it optional, so library
  // users need not have it. Running the command on the module path: --add-modules info.picocli.
  requires static info.picocli;

  exports dev.confine;
  exports dev.confine.session;
  exports dev.confine.local;
  exports dev.confine.confined;
  exports dev.confine.testing;

  // picocli reads and writes the commands' annotated fields, private ones included, by reflection.
  opens dev.confine.cli to
      info.picocli;
}
