package dev.confine.net;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * The HTTP side of a client connection: authenticates, then per request decides and either forwards
 * it (absolute form, keep-alive, one request at a time) or opens a CONNECT tunnel.
 *
 * <p>Requests are taken one at a time: reading stops while a request waits for its decision or its
 * response, so a pipelining client is served in order and never buffered beyond one read. The token
 * and every hop-by-hop header are stripped before a request leaves.
 */
final class HttpFrontend extends ChannelInboundHandlerAdapter {
  static final String CODEC = "http-codec";

  private enum State {
    IDLE,
    DECIDING,
    SENDING,
    AWAITING_RESPONSE,
    TUNNEL,
    CLOSING
  }

  private final ProxyContext px;
  private final Handshake handshake;
  private final ArrayDeque<HttpObject> queued = new ArrayDeque<>();
  private ChannelHandlerContext ctx;
  private State state = State.IDLE;
  private Link backend;
  private boolean clientWantsClose;
  private boolean responseStarted;

  HttpFrontend(ProxyContext px, Handshake handshake) {
    this.px = px;
    this.handshake = handshake;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof HttpObject o) || state == State.CLOSING || state == State.TUNNEL) {
      ReferenceCountUtil.release(msg);
      return;
    }
    queued.add(o);
    drain();
  }

  /** Takes queued request parts as far as the state allows. */
  private void drain() {
    while (!queued.isEmpty()) {
      HttpObject o = queued.peek();
      if (state == State.IDLE) {
        queued.poll();
        if (o instanceof HttpRequest request) {
          begin(request);
        }
        // Content without a request: what is left of a refused request.
        releaseIfContent(o);
      } else if (state == State.SENDING) {
        queued.poll();
        send((HttpContent) o);
      } else if (state == State.CLOSING) {
        ReferenceCountUtil.release(queued.poll());
      } else {
        break;
      }
    }
    reading(state == State.IDLE || state == State.SENDING);
  }

  private static void releaseIfContent(HttpObject o) {
    if (o instanceof HttpContent c) {
      c.release();
    }
  }

  private void reading(boolean on) {
    boolean writable = backend == null || backend.channel.isWritable();
    ctx.channel().config().setAutoRead(on && writable);
  }

  private void begin(HttpRequest request) {
    DecoderResult result = request.decoderResult();
    if (result.isFailure()) {
      refuse(badRequestStatus(result.cause()), "malformed request: " + describe(result.cause()));
      return;
    }
    handshake.done();
    if (!authorized(request.headers())) {
      var r =
          Answers.response(
              HttpResponseStatus.PROXY_AUTHENTICATION_REQUIRED,
              Answers.PREFIX
                  + "proxy authentication required: the proxy's token as the password (user"
                  + " name any)");
      r.headers().set(HttpHeaderNames.PROXY_AUTHENTICATE, "Basic realm=\"confine\"");
      state = State.CLOSING;
      Answers.sendAndClose(ctx.channel(), r);
      return;
    }
    clientWantsClose = !HttpUtil.isKeepAlive(request);
    if (request.method().equals(HttpMethod.CONNECT)) {
      connect(request);
    } else {
      forward(request);
    }
  }

  private static HttpResponseStatus badRequestStatus(Throwable cause) {
    if (cause instanceof TooLongHttpLineException) {
      return HttpResponseStatus.REQUEST_URI_TOO_LONG;
    }
    if (cause instanceof TooLongHttpHeaderException) {
      return HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE;
    }
    return HttpResponseStatus.BAD_REQUEST;
  }

  private static String describe(Throwable cause) {
    return Texts.describe(cause);
  }

  private boolean authorized(HttpHeaders headers) {
    if (!px.tokenRequired()) {
      return true;
    }
    String value = headers.get(HttpHeaderNames.PROXY_AUTHORIZATION);
    if (value == null || !value.regionMatches(true, 0, "Basic ", 0, 6)) {
      return false;
    }
    String pair;
    try {
      pair =
          new String(
              Base64.getDecoder().decode(value.substring(6).strip()), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return false;
    }
    int colon = pair.indexOf(':');
    return colon >= 0 && px.tokenMatches(pair.substring(colon + 1));
  }

  private void refuse(HttpResponseStatus status, String text) {
    state = State.CLOSING;
    closeBackend();
    Answers.sendAndClose(ctx.channel(), status, Answers.PREFIX + text);
  }

  // ---- CONNECT ----

  private void connect(HttpRequest request) {
    Authority target = Authority.parse(request.uri(), 443);
    if (target == null) {
      refuse(
          HttpResponseStatus.BAD_REQUEST, "invalid CONNECT target " + Texts.quote(request.uri()));
      return;
    }
    state = State.DECIDING;
    closeBackend();
    px.decider
        .decide(ProxyProtocol.CONNECT, target.host(), target.port())
        .whenComplete((v, e) -> ctx.executor().execute(() -> connectDecided(v)));
  }

  private void connectDecided(Verdict v) {
    if (state != State.DECIDING) {
      return;
    }
    px.decided(v.decision());
    if (!answerRefusal(v)) {
      return;
    }
    var blocked = px.connectBlocked(v.decision().host(), v.decision().port());
    if (blocked.isPresent()) {
      refuse(
          HttpResponseStatus.FORBIDDEN,
          v.decision().host() + ":" + v.decision().port() + " blocked by hook: " + blocked.get());
      return;
    }
    whenDialed(
        px.dialer.tunnel(ctx.channel().eventLoop(), v.targets()),
        v,
        out -> {
          state = State.TUNNEL;
          queued.forEach(ReferenceCountUtil::release);
          queued.clear();
          // Written beneath the codec, before anything that follows the tunnel writes.
          ctx.pipeline()
              .context(CODEC)
              .writeAndFlush(
                  Unpooled.copiedBuffer(
                      "HTTP/1.1 200 Connection Established\r\n\r\n", StandardCharsets.US_ASCII));
          // Bytes the client sent after its CONNECT, still in the decoder, follow the tunnel.
          Tunnel.splice(px, ctx, out, v, List.of(CODEC));
        });
  }

  /**
   * Runs {@code connected} with the outbound channel once {@code dial} succeeds while this client
   * still waits for it; answers 502 when it fails, and closes a channel nobody waits for any more.
   */
  private void whenDialed(Future<Channel> dial, Verdict v, Consumer<Channel> connected) {
    dial.addListener(
        f -> {
          if (!f.isSuccess()) {
            Link.failed(px, v.decision(), describe(f.cause()));
            refuse(
                HttpResponseStatus.BAD_GATEWAY,
                "cannot connect to "
                    + v.decision().host()
                    + ":"
                    + v.decision().port()
                    + ": "
                    + describe(f.cause()));
            return;
          }
          Channel out = dial.getNow();
          if (state != State.DECIDING || !ctx.channel().isActive()) {
            out.close();
            return;
          }
          connected.accept(out);
        });
  }

  /** Answers a refused or failed verdict; true when the verdict allows. */
  private boolean answerRefusal(Verdict v) {
    switch (v.outcome()) {
      case ALLOW -> {
        return true;
      }
      case DENY ->
          refuse(
              HttpResponseStatus.FORBIDDEN,
              Answers.refusal(v.decision()).substring(Answers.PREFIX.length()));
      case INVALID -> refuse(HttpResponseStatus.BAD_REQUEST, v.decision().reason());
      case UNREACHABLE -> refuse(HttpResponseStatus.BAD_GATEWAY, v.decision().reason());
    }
    return false;
  }

  // ---- forwarding ----

  private void forward(HttpRequest request) {
    AbsoluteUri uri = AbsoluteUri.parse(request.uri());
    if (uri == null) {
      refuse(
          HttpResponseStatus.BAD_REQUEST,
          "this is a proxy: send an absolute-form request (GET http://host/path) or CONNECT, not "
              + Texts.quote(request.uri()));
      return;
    }
    state = State.DECIDING;
    px.decider
        .decide(ProxyProtocol.HTTP, uri.authority().host(), uri.authority().port())
        .whenComplete((v, e) -> ctx.executor().execute(() -> forwardDecided(request, uri, v)));
  }

  private void forwardDecided(HttpRequest request, AbsoluteUri uri, Verdict v) {
    if (state != State.DECIDING) {
      return;
    }
    px.decided(v.decision());
    if (!answerRefusal(v)) {
      return;
    }
    String key = v.decision().host() + ":" + v.decision().port() + "@" + v.targets();
    if (backend != null && backend.channel.isActive() && backend.key.equals(key)) {
      startSending(request, uri, v);
      return;
    }
    closeBackend();
    whenDialed(
        px.dialer.forwarding(ctx.channel().eventLoop(), v.targets()),
        v,
        out -> {
          backend = Link.open(px, out, v.decision(), key);
          out.pipeline()
              .replace(Holding.NAME, "http-client", new HttpClientCodec(8192, 65536, 65536));
          out.pipeline().addLast("backend", new Backend(backend));
          out.config().setAutoRead(true);
          startSending(request, uri, v);
        });
  }

  private void startSending(HttpRequest request, AbsoluteUri uri, Verdict v) {
    responseStarted = false;
    HttpRequest outbound = rewrite(request, uri, v);
    state = State.SENDING;
    backend.channel.write(outbound, backend.channel.voidPromise());
    if (request instanceof HttpContent c) {
      send(c);
    }
    backend.channel.flush();
    drain();
  }

  private void send(HttpContent content) {
    backend.addOut(content.content().readableBytes());
    boolean last = content instanceof LastHttpContent;
    backend.channel.write(content, backend.channel.voidPromise());
    if (last) {
      backend.channel.flush();
      state = State.AWAITING_RESPONSE;
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (backend != null && state == State.SENDING) {
      backend.channel.flush();
    }
  }

  /** The request as it leaves: origin form (or absolute form to an HTTP upstream), no token. */
  private HttpRequest rewrite(HttpRequest request, AbsoluteUri uri, Verdict v) {
    HttpHeaders headers = request.headers().copy();
    HopByHop.strip(headers);
    if (!headers.contains(HttpHeaderNames.HOST)) {
      headers.set(HttpHeaderNames.HOST, uri.authority().text());
    }
    String target;
    if (px.dialer.forwardsToHttpUpstream()) {
      // To the upstream in absolute form; the pinned address when IP rules needed it.
      String authority =
          v.targets().get(0).isUnresolved()
              ? uri.authority().text()
              : Authority.format(
                  v.targets().get(0).getAddress().getHostAddress(), uri.authority().port());
      target = "http://" + authority + uri.pathAndQuery();
      px.dialer
          .upstream()
          .flatMap(Upstream::basicAuthorization)
          .ifPresent(a -> headers.set(HttpHeaderNames.PROXY_AUTHORIZATION, a));
    } else {
      target = uri.pathAndQuery();
    }
    return new DefaultHttpRequest(request.protocolVersion(), request.method(), target, headers);
  }

  private void closeBackend() {
    if (backend != null) {
      backend.channel.close();
      backend = null;
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (backend != null) {
      backend.channel.config().setAutoRead(ctx.channel().isWritable());
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    state = State.CLOSING;
    closeBackend();
    queued.forEach(ReferenceCountUtil::release);
    queued.clear();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }

  /** The destination's side of forwarded requests: streams each response back to the client. */
  private final class Backend extends ChannelInboundHandlerAdapter {
    private final Link link;
    private boolean informational;
    private boolean closeAfter;

    Backend(Link link) {
      this.link = link;
    }

    @Override
    public void channelRead(ChannelHandlerContext bctx, Object msg) {
      Channel client = ctx.channel();
      if (backend != link || state == State.CLOSING) {
        ReferenceCountUtil.release(msg);
        return;
      }
      if (msg instanceof HttpResponse response) {
        if (response.decoderResult().isFailure()) {
          ReferenceCountUtil.release(msg);
          link.error = "malformed response: " + describe(response.decoderResult().cause());
          failResponse();
          return;
        }
        HttpStatusClass kind = response.status().codeClass();
        informational =
            kind == HttpStatusClass.INFORMATIONAL
                && response.status().code() != HttpResponseStatus.SWITCHING_PROTOCOLS.code();
        HttpResponse copy = copyOf(response);
        if (!informational) {
          closeAfter = clientWantsClose || !HttpUtil.isKeepAlive(response) || readsUntilClose(copy);
          if (closeAfter) {
            copy.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
          } else if (copy.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
            copy.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
          }
        }
        responseStarted = true;
        client.write(copy, client.voidPromise());
        if (msg instanceof HttpContent c) {
          content(c);
        }
        return;
      }
      if (msg instanceof HttpContent c) {
        content(c);
        return;
      }
      ReferenceCountUtil.release(msg);
    }

    private HttpResponse copyOf(HttpResponse response) {
      HttpHeaders headers = response.headers().copy();
      HopByHop.strip(headers);
      return new DefaultHttpResponse(response.protocolVersion(), response.status(), headers);
    }

    private boolean readsUntilClose(HttpResponse r) {
      int code = r.status().code();
      boolean noBody = code == 204 || code == 304 || (code >= 100 && code < 200);
      return !noBody
          && !r.headers().contains(HttpHeaderNames.CONTENT_LENGTH)
          && !HttpUtil.isTransferEncodingChunked(r);
    }

    private void content(HttpContent c) {
      Channel client = ctx.channel();
      link.addIn(c.content().readableBytes());
      boolean last = c instanceof LastHttpContent;
      if (informational) {
        // The codec ends a 1xx with an empty last content; the real response follows.
        c.release();
        if (last) {
          client.flush();
        }
        return;
      }
      client.write(c, client.voidPromise());
      if (last) {
        client.flush();
        finished();
      }
    }

    private void finished() {
      if (closeAfter) {
        state = State.CLOSING;
        Relay.closeOnFlush(ctx.channel());
        closeBackend();
        return;
      }
      state = State.IDLE;
      drain();
    }

    private void failResponse() {
      if (!responseStarted) {
        refuse(
            HttpResponseStatus.BAD_GATEWAY,
            link.error.isEmpty() ? "the destination closed the connection" : link.error);
      } else {
        state = State.CLOSING;
        ctx.channel().close();
      }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext bctx) {
      ctx.channel().flush();
      if (!ctx.channel().isWritable()) {
        bctx.channel().config().setAutoRead(false);
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext bctx) {
      if (backend == link && state == State.SENDING) {
        reading(true);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext bctx) {
      if (backend != link) {
        return;
      }
      backend = null;
      if (state == State.SENDING || state == State.AWAITING_RESPONSE) {
        failResponse();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext bctx, Throwable cause) {
      link.error = describe(cause);
      bctx.close();
    }
  }

  /** Hop-by-hop headers (RFC 9110 §7.6.1) and the proxy's own, which never leave the proxy. */
  static final class HopByHop {
    private static final List<CharSequence> NAMES =
        List.of(
            HttpHeaderNames.CONNECTION,
            AsciiString.cached("keep-alive"),
            HttpHeaderNames.PROXY_AUTHORIZATION,
            HttpHeaderNames.PROXY_AUTHENTICATE,
            AsciiString.cached("proxy-connection"),
            HttpHeaderNames.TE,
            HttpHeaderNames.TRAILER,
            HttpHeaderNames.TRANSFER_ENCODING,
            HttpHeaderNames.UPGRADE);

    private HopByHop() {}

    static void strip(HttpHeaders headers) {
      for (String listed : headers.getAll(HttpHeaderNames.CONNECTION)) {
        for (String name : listed.split(",")) {
          String n = name.strip().toLowerCase(Locale.ROOT);
          if (!n.isEmpty()) {
            headers.remove(n);
          }
        }
      }
      boolean chunked =
          headers.containsValue(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED, true);
      NAMES.forEach(headers::remove);
      if (chunked) {
        // Framing, not a hop's choice: the codec re-frames the body as chunks.
        headers.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
      }
    }
  }
}
