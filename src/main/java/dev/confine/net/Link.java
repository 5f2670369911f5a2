package dev.confine.net;

import io.netty.channel.Channel;

/**
 * One outbound connection of the proxy and its audit: the decision that opened it, the bytes each
 * way and its start. Touched only on its event loop. Reports itself closed once, when its channel
 * closes.
 */
final class Link {
  final Channel channel;
  final ProxyDecision decision;
  final String key;
  private final long start = System.nanoTime();
  long out;
  long in;
  String error = "";

  private Link(Channel channel, ProxyDecision decision, String key) {
    this.channel = channel;
    this.decision = decision;
    this.key = key;
  }

  static Link open(ProxyContext px, Channel channel, ProxyDecision decision, String key) {
    Link link = new Link(channel, decision, key);
    channel
        .closeFuture()
        .addListener(f -> px.closed(decision, link.out, link.in, link.start, link.error));
    return link;
  }

  /** Reports a connection that could not be made. */
  static void failed(ProxyContext px, ProxyDecision decision, String error) {
    px.closed(decision, 0, 0, System.nanoTime(), error);
  }

  void addOut(long n) {
    out += n;
  }

  void addIn(long n) {
    in += n;
  }
}
