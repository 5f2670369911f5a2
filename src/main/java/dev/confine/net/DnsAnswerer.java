package dev.confine.net;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.dns.DefaultDnsRawRecord;
import io.netty.handler.codec.dns.DefaultDnsResponse;
import io.netty.handler.codec.dns.DnsQuery;
import io.netty.handler.codec.dns.DnsRecord;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsResponse;
import io.netty.handler.codec.dns.DnsResponseCode;
import io.netty.handler.codec.dns.DnsSection;
import io.netty.handler.codec.dns.TcpDnsQueryDecoder;
import io.netty.handler.codec.dns.TcpDnsResponseEncoder;
import io.netty.util.ReferenceCountUtil;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.Locale;

/**
 * DNS over TCP (RFC 7766) for a supervised child, whose resolver was told to use TCP ({@code
 * RES_OPTIONS=use-vc}) and whose connect to its name server the supervisor sent here. The proxy
 * answers each question itself and never forwards one: A and AAAA with the addresses it would
 * connect to (resolved once, the special ones dropped unless an IP rule allows them: the same check
 * as a connection's), recording each as that name's so that a later connection to it is decided by
 * the name; REFUSED for a name no rule allows (a denied name leaks nothing to the host's resolver),
 * NXDOMAIN for one that does not resolve; other types of an allowed name an empty answer. A name
 * counts as allowed when any of its allow rules does, whatever its port.
 */
final class DnsAnswerer extends ChannelInboundHandlerAdapter {
  private static final long TTL = 60;

  private final ProxyContext px;

  DnsAnswerer(ProxyContext px) {
    this.px = px;
  }

  /** Adds the DNS codec and an answerer at the end of {@code pipeline}. */
  static void install(ChannelPipeline pipeline, ProxyContext px) {
    pipeline
        .addLast("dns-encoder", new TcpDnsResponseEncoder())
        .addLast("dns-decoder", new TcpDnsQueryDecoder())
        .addLast("dns", new DnsAnswerer(px));
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof DnsQuery query)) {
      ReferenceCountUtil.release(msg);
      ctx.close();
      return;
    }
    try {
      DnsRecord question = query.recordAt(DnsSection.QUESTION);
      if (question == null || query.count(DnsSection.QUESTION) != 1) {
        ctx.writeAndFlush(response(query, null, DnsResponseCode.FORMERR));
        return;
      }
      String name = question.name().toLowerCase(Locale.ROOT);
      String host = name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
      DnsRecordType type = question.type();
      DnsQuery kept = ReferenceCountUtil.retain(query);
      px.decider
          .decide(ProxyProtocol.DNS, host, RuleMatcher.ANY_PORT)
          .whenComplete(
              (v, e) ->
                  ctx.executor()
                      .execute(
                          () -> {
                            try {
                              answer(ctx, kept, question, host, type, v);
                            } finally {
                              kept.release();
                            }
                          }));
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  private void answer(
      ChannelHandlerContext ctx,
      DnsQuery query,
      DnsRecord question,
      String host,
      DnsRecordType type,
      Verdict v) {
    if (!ctx.channel().isActive()) {
      return;
    }
    px.decided(v.decision());
    DnsResponseCode code =
        switch (v.outcome()) {
          case ALLOW -> DnsResponseCode.NOERROR;
          case DENY -> DnsResponseCode.REFUSED;
          case INVALID -> DnsResponseCode.FORMERR;
          case UNREACHABLE -> DnsResponseCode.NXDOMAIN;
        };
    DnsResponse r = response(query, question, code);
    if (v.outcome() == Verdict.Outcome.ALLOW) {
      for (InetSocketAddress t : v.targets()) {
        if (t.isUnresolved()) {
          continue; // an upstream proxy resolves it: no address to give
        }
        boolean v4 = t.getAddress() instanceof Inet4Address;
        boolean v6 = t.getAddress() instanceof Inet6Address;
        if ((type == DnsRecordType.A && v4) || (type == DnsRecordType.AAAA && v6)) {
          r.addRecord(
              DnsSection.ANSWER,
              new DefaultDnsRawRecord(
                  question.name(), type, TTL, Unpooled.wrappedBuffer(t.getAddress().getAddress())));
          px.answered(t.getAddress(), host);
        }
      }
    }
    ctx.writeAndFlush(r);
  }

  private static DnsResponse response(DnsQuery query, DnsRecord question, DnsResponseCode code) {
    DefaultDnsResponse r = new DefaultDnsResponse(query.id(), query.opCode(), code);
    r.setRecursionDesired(query.isRecursionDesired());
    r.setRecursionAvailable(true);
    if (question != null) {
      r.addRecord(DnsSection.QUESTION, question);
    }
    return r;
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
