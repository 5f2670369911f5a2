/**
 * Confine: run a command under an enforced policy.
 *
 * <p>The API is {@code dev.confine} (policies, requests, results, runners and their decorators),
 * {@code dev.confine.session} (interactive and streaming process sessions), {@code
 * dev.confine.local} (the local backend), {@code dev.confine.confined} (the confined backend),
 * {@code dev.confine.net} (the egress proxy: its builder, decision and audit events, hooks) and
 * {@code dev.confine.testing} (test doubles for your own tests: a runner, a session manager and a
 * session that run nothing). What the host backends share ({@code dev.confine.host}), the engine
 * ({@code dev.confine.linux} and its packages by job, its generated libc bindings in {@code
 * dev.confine.linux.libc}), the egress proxy's TLS interception material ({@code
 * dev.confine.net.tls}) and the {@code confine} command ({@code dev.confine.cli}) are internal:
 * they are not exported and may change in any release.
 *
 * <p>The API also has {@code dev.confine.bwrap}, the bubblewrap backend, and {@code
 * dev.confine.seatbelt}, the macOS backend, which runs nothing yet.
 *
 * <p>The engine calls libc through the Foreign Function &amp; Memory API: on the module path start
 * java with {@code --enable-native-access=dev.confine} (on the class path, {@code
 * --enable-native-access=ALL-UNNAMED}). The egress proxy uses Netty's native epoll transport where
 * it loads (add {@code --enable-native-access=io.netty.common} on the module path) and the JDK's
 * NIO otherwise.
 */
module dev.confine {
  requires org.slf4j;
  requires io.netty.buffer;
  requires io.netty.codec;
  requires io.netty.codec.dns;
  requires io.netty.codec.http;
  requires io.netty.codec.http2;
  requires io.netty.codec.socks;
  requires io.netty.common;
  requires io.netty.handler;
  requires io.netty.handler.proxy;
  requires io.netty.resolver;
  requires io.netty.transport;
  requires io.netty.transport.classes.epoll;
  requires io.netty.transport.unix.common;

  // BouncyCastle builds the certificates of the egress proxy's TLS interception
  // (dev.confine.net.tls); it is never registered as a JCA provider.
  requires org.bouncycastle.pkix;
  requires org.bouncycastle.provider;

  // Only the confine command (dev.confine.cli) uses picocli; the pom makes it optional, so library
  // users need not have it. Running the command on the module path: --add-modules info.picocli.
  requires static info.picocli;

  exports dev.confine;
  exports dev.confine.session;
  exports dev.confine.local;
  exports dev.confine.confined;
  exports dev.confine.seatbelt;
  exports dev.confine.bwrap;
  exports dev.confine.testing;
  exports dev.confine.net;

  // picocli reads and writes the commands' annotated fields, private ones included, by reflection.
  opens dev.confine.cli to
      info.picocli;
}
