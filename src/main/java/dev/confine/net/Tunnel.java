package dev.confine.net;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Future;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What an allowed CONNECT or SOCKS5 tunnel becomes once its destination is connected and the client
 * has been told so: a relay of bytes both ways, or, when the proxy intercepts TLS for its host, a
 * {@link MitmTunnel}. Both frontends end their tunnels here.
 */
final class Tunnel {
  private Tunnel() {}

  /**
   * Runs {@code connected} with the outbound channel once {@code dial} succeeds while {@code
   * client} is still open; on failure reports the connection failed to the audit and runs {@code
   * failed} with the cause; closes an outbound channel nobody waits for any more.
   */
  static void whenDialed(
      ProxyContext px,
      Verdict v,
      Channel client,
      Future<Channel> dial,
      Consumer<Throwable> failed,
      Consumer<Channel> connected) {
    dial.addListener(
        f -> {
          if (!f.isSuccess()) {
            Link.failed(px, v.decision(), String.valueOf(f.cause().getMessage()));
            failed.accept(f.cause());
            return;
          }
          Channel out = dial.getNow();
          if (!client.isActive()) {
            out.close();
            return;
          }
          connected.accept(out);
        });
  }

  /**
   * Replaces the frontend's handler ({@code frontend}) and removes its {@code codecs}, whose
   * leftover bytes (what the client sent right after asking) go to what follows; turns reading on.
   */
  static void splice(
      ProxyContext px,
      ChannelHandlerContext frontend,
      Channel out,
      Verdict v,
      List<String> codecs) {
    Channel client = frontend.channel();
    ChannelPipeline p = frontend.pipeline();
    String host = v.decision().host();
    if (px.mitm.isPresent() && px.mitm.get().intercepts(host)) {
      Mitm mitm = px.mitm.get();
      SslHandler tls;
      try {
        tls = mitm.serverContext(host).newHandler(client.alloc());
      } catch (RuntimeException e) {
        Link.open(px, out, v.decision(), "").error =
            "cannot make the certificate for " + host + ": " + e.getMessage();
        out.close();
        client.close();
        return;
      }
      tls.setHandshakeTimeout(px.limits.handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS);
      MitmTunnel tunnel = new MitmTunnel(px, mitm, client, v, out);
      p.replace(frontend.handler(), MitmTunnel.TLS, tls);
      p.addAfter(MitmTunnel.TLS, "mitm-alpn", tunnel.negotiation());
    } else {
      Link link = Link.open(px, out, v.decision(), "");
      out.pipeline().replace(Holding.NAME, "relay", new Relay(client, link::addIn));
      p.replace(frontend.handler(), "relay", new Relay(out, link::addOut));
      out.config().setAutoRead(true);
    }
    codecs.forEach(p::remove);
    client.config().setAutoRead(true);
  }
}
