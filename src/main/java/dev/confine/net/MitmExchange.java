package dev.confine.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.Optional;

/**
 * The client's side of intercepted requests: on an HTTP/1.1 connection, its requests one at a time
 * (a pipelined one waits, reading stops); on HTTP/2, one stream's request. Each request is shown to
 * the request hook, sent on a connection of the tunnel's ({@link MitmTunnel#acquire}), and its
 * response shown to the response hook and streamed back.
 *
 * <p>Bodies are buffered only for the hooks, only when the policy inspects bodies and the body
 * declares a length within the cap; any other body streams both ways as it comes, with backpressure
 * (a side that cannot write stops the other reading).
 */
final class MitmExchange extends ChannelInboundHandlerAdapter {
  private enum State {
    /** Waiting for a request (HTTP/2: its one request). */
    IDLE,
    /** Reading a request body to show the hook. */
    BUFFERING_REQUEST,
    /** The request waits for a connection to the destination. */
    WAITING,
    /** Sending the request's body as it comes. */
    SENDING,
    /** The request is sent; its response has not begun. */
    AWAITING_RESPONSE,
    /** Reading a response body to show the hook. */
    BUFFERING_RESPONSE,
    /** Streaming the response to the client. */
    RESPONDING,
    /** Answered or failed: the rest is dropped. */
    CLOSING
  }

  private final MitmTunnel tunnel;
  private final ProxyContext px;
  private final boolean h2;
  private final ArrayDeque<HttpObject> queued = new ArrayDeque<>();
  private ChannelHandlerContext ctx;
  private State state = State.IDLE;
  private HttpRequest clientHead;
  private HttpRequest outbound;
  private ProxyRequest request;
  private boolean requestSent;
  private boolean head;
  private boolean clientWantsClose;
  private MitmTunnel.Origin origin;
  private ByteBuf buffer;
  private long declared;
  private HttpResponse response;
  private boolean informational;
  private boolean originKeepsAlive;
  private boolean responseStarted;
  private boolean closeAfterResponse;

  MitmExchange(MitmTunnel tunnel, boolean h2) {
    this.tunnel = tunnel;
    this.px = tunnel.px;
    this.h2 = h2;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  // ---- the request ----

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof HttpObject o) || state == State.CLOSING) {
      ReferenceCountUtil.release(msg);
      return;
    }
    queued.add(o);
    drain();
  }

  private void drain() {
    while (!queued.isEmpty() && state != State.CLOSING) {
      HttpObject o = queued.peek();
      if (state == State.IDLE) {
        queued.poll();
        if (o instanceof HttpRequest r) {
          begin(r);
        } else {
          ReferenceCountUtil.release(o); // what is left of a refused request
        }
      } else if (state == State.BUFFERING_REQUEST) {
        bufferRequest((HttpContent) queued.poll());
      } else if (state == State.SENDING) {
        send((HttpContent) queued.poll());
      } else {
        break;
      }
    }
    if (state == State.CLOSING) {
      releaseQueued();
    }
    reading();
  }

  /** Reads from the client only while a request is taken in and the destination keeps up. */
  private void reading() {
    boolean taking =
        state == State.IDLE || state == State.BUFFERING_REQUEST || state == State.SENDING;
    boolean writable = origin == null || origin.channel.isWritable();
    ctx.channel().config().setAutoRead(taking && writable);
  }

  private void begin(HttpRequest r) {
    if (r instanceof HttpContent c) {
      // A whole request in one message (HTTP/2 without a body): its content follows as a part.
      queued.addFirst(
          c instanceof LastHttpContent last
              ? new DefaultLastHttpContent(c.content(), last.trailingHeaders())
              : new DefaultHttpContent(c.content()));
    }
    if (r.decoderResult().isFailure()) {
      answer(
          HttpResponseStatus.BAD_REQUEST,
          "malformed request: " + Texts.describe(r.decoderResult().cause()));
      return;
    }
    clientWantsClose = !h2 && !HttpUtil.isKeepAlive(r);
    head = r.method().equals(HttpMethod.HEAD);
    clientHead = r;
    outbound = outboundRequest(r);
    requestSent = false;
    responseStarted = false;
    declared = inspectable(r) ? HttpUtil.getContentLength(r, -1L) : -1;
    request = px.hooked() ? requestInfo(r, Optional.empty()) : null;
    if (declared >= 0) {
      buffer = ctx.alloc().buffer((int) Math.min(declared, 8192));
      state = State.BUFFERING_REQUEST;
      return;
    }
    if (request != null && blocked(px.requestBlocked(request), "request to")) {
      return;
    }
    state = State.WAITING;
    tunnel.acquire(this);
  }

  /**
   * Whether a message's body is shown to the hooks: inspection on, a length declared within cap.
   */
  private boolean inspectable(HttpMessage m) {
    if (!px.hooked() || !tunnel.mitm.inspectBodies() || HttpUtil.isTransferEncodingChunked(m)) {
      return false;
    }
    long length;
    try {
      length = HttpUtil.getContentLength(m, -1L);
    } catch (NumberFormatException e) {
      return false;
    }
    return length >= 0 && length <= tunnel.mitm.maxBody();
  }

  private void bufferRequest(HttpContent c) {
    boolean last = c instanceof LastHttpContent;
    buffer.writeBytes(c.content());
    c.release();
    if (buffer.readableBytes() > declared) {
      // More than it declared: shown to no hook, forwarded as it comes.
      if (blocked(px.requestBlocked(request), "request to")) {
        return;
      }
      queued.addFirst(last ? new DefaultLastHttpContent(buffer) : new DefaultHttpContent(buffer));
      buffer = null;
      state = State.WAITING;
      tunnel.acquire(this);
      return;
    }
    if (!last) {
      return;
    }
    ByteBuf body = buffer;
    buffer = null;
    request = requestInfo(clientHead, Optional.of(ByteBufUtil.getBytes(body)));
    if (blocked(px.requestBlocked(request), "request to")) {
      body.release();
      return;
    }
    outbound.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
    HttpUtil.setContentLength(outbound, body.readableBytes());
    queued.addFirst(new DefaultLastHttpContent(body));
    state = State.WAITING;
    tunnel.acquire(this);
  }

  /** The request as it leaves: HTTP/1.1, no hop-by-hop or HTTP/2 conversion headers, a Host. */
  private HttpRequest outboundRequest(HttpRequest r) {
    HttpHeaders headers = r.headers().copy();
    HttpFrontend.HopByHop.strip(headers);
    for (HttpConversionUtil.ExtensionHeaderNames n :
        HttpConversionUtil.ExtensionHeaderNames.values()) {
      headers.remove(n.text());
    }
    headers.remove(HttpHeaderNames.EXPECT);
    if (!headers.contains(HttpHeaderNames.HOST)) {
      headers.set(HttpHeaderNames.HOST, defaultHost());
    }
    return new DefaultHttpRequest(HttpVersion.HTTP_1_1, r.method(), r.uri(), headers);
  }

  /** The tunnel's authority as a Host header names it: without the port when it is 443. */
  private String defaultHost() {
    String target = tunnel.target();
    return tunnel.port() == 443 ? target.substring(0, target.length() - ":443".length()) : target;
  }

  private ProxyRequest requestInfo(HttpRequest r, Optional<byte[]> body) {
    String host = r.headers().get(HttpHeaderNames.HOST, defaultHost());
    return new ProxyRequest(
        r.method().name(), "https", host, r.uri(), Messages.of(clientHeaders(r)), body);
  }

  /** The headers the client sent, without the ones the HTTP/2 conversion adds. */
  private static HttpHeaders clientHeaders(HttpRequest r) {
    HttpHeaders headers = r.headers().copy();
    for (HttpConversionUtil.ExtensionHeaderNames n :
        HttpConversionUtil.ExtensionHeaderNames.values()) {
      headers.remove(n.text());
    }
    return headers;
  }

  /** A connection to the destination is this exchange's: the request goes. */
  void assigned(MitmTunnel.Origin o) {
    if (state != State.WAITING || !ctx.channel().isActive()) {
      tunnel.release(o, true);
      return;
    }
    origin = o;
    origin.decoder.head = head;
    state = State.SENDING;
    origin.channel.write(outbound, origin.channel.voidPromise());
    drain();
    origin.channel.flush();
  }

  private void send(HttpContent c) {
    origin.link.addOut(c.content().readableBytes());
    origin.channel.write(c, origin.channel.voidPromise());
    if (c instanceof LastHttpContent) {
      origin.channel.flush();
      requestSent = true;
      state = State.AWAITING_RESPONSE;
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (origin != null && state == State.SENDING) {
      origin.channel.flush();
    }
  }

  // ---- the response ----

  void fromOrigin(HttpObject o) {
    if (state != State.AWAITING_RESPONSE
        && state != State.SENDING
        && state != State.BUFFERING_RESPONSE
        && state != State.RESPONDING) {
      ReferenceCountUtil.release(o);
      return;
    }
    if (o instanceof HttpResponse r) {
      if (r.decoderResult().isFailure()) {
        ReferenceCountUtil.release(o);
        origin.fail("malformed response: " + Texts.describe(r.decoderResult().cause()));
        origin.channel.close();
        return;
      }
      respond(r);
    }
    if (o instanceof HttpContent c) {
      responseContent(c);
    } else if (!(o instanceof HttpResponse)) {
      ReferenceCountUtil.release(o);
    }
  }

  private void respond(HttpResponse r) {
    informational =
        r.status().codeClass() == HttpStatusClass.INFORMATIONAL
            && r.status().code() != HttpResponseStatus.SWITCHING_PROTOCOLS.code();
    if (informational) {
      return; // Expect was answered by the proxy; other 1xx are not passed on
    }
    originKeepsAlive = HttpUtil.isKeepAlive(r);
    HttpHeaders headers = r.headers().copy();
    HttpFrontend.HopByHop.strip(headers);
    response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, r.status(), headers);
    boolean untilClose = readsUntilClose(r);
    originKeepsAlive &= !untilClose;
    closeAfterResponse = clientWantsClose || (!h2 && untilClose);
    if (closeAfterResponse && !h2) {
      headers.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
    boolean bodyless = head || noBody(r.status().code());
    declared = !bodyless && inspectable(r) ? HttpUtil.getContentLength(r, -1L) : -1;
    if (declared >= 0) {
      buffer = ctx.alloc().buffer((int) Math.min(declared, 8192));
      state = State.BUFFERING_RESPONSE;
      return;
    }
    if (request != null
        && blocked(
            px.responseBlocked(
                new ProxyResponse(
                    request, r.status().code(), Messages.of(r.headers()), Optional.empty())),
            "response from")) {
      return;
    }
    state = State.RESPONDING;
    responseStarted = true;
    ctx.write(response, ctx.voidPromise());
  }

  private static boolean noBody(int code) {
    return code == 204 || code == 304 || (code >= 100 && code < 200);
  }

  private boolean readsUntilClose(HttpResponse r) {
    return !head
        && !noBody(r.status().code())
        && !r.headers().contains(HttpHeaderNames.CONTENT_LENGTH)
        && !HttpUtil.isTransferEncodingChunked(r);
  }

  private void responseContent(HttpContent c) {
    boolean last = c instanceof LastHttpContent;
    if (informational) {
      c.release();
      informational = !last;
      return;
    }
    origin.link.addIn(c.content().readableBytes());
    if (state == State.BUFFERING_RESPONSE) {
      buffer.writeBytes(c.content());
      c.release();
      if (buffer.readableBytes() > declared) {
        // More than it declared: shown to no hook, passed on as it comes.
        ProxyResponse info =
            new ProxyResponse(
                request,
                response.status().code(),
                Messages.of(response.headers()),
                Optional.empty());
        ByteBuf read = buffer;
        buffer = null;
        if (blocked(px.responseBlocked(info), "response from")) {
          read.release();
          return;
        }
        state = State.RESPONDING;
        responseStarted = true;
        ctx.write(response, ctx.voidPromise());
        ctx.write(last ? new DefaultLastHttpContent(read) : new DefaultHttpContent(read));
        if (last) {
          finished();
        }
        return;
      }
      if (last) {
        ByteBuf body = buffer;
        buffer = null;
        ProxyResponse info =
            new ProxyResponse(
                request,
                response.status().code(),
                Messages.of(response.headers()),
                Optional.of(ByteBufUtil.getBytes(body)));
        if (blocked(px.responseBlocked(info), "response from")) {
          body.release();
          return;
        }
        responseStarted = true;
        ctx.write(response, ctx.voidPromise());
        ctx.write(new DefaultLastHttpContent(body), ctx.voidPromise());
        finished();
      }
      return;
    }
    if (state != State.RESPONDING) {
      c.release();
      return;
    }
    ctx.write(c, ctx.voidPromise());
    if (last) {
      finished();
    }
  }

  void originReadComplete() {
    ctx.flush();
    if (origin != null && !ctx.channel().isWritable()) {
      origin.channel.config().setAutoRead(false);
    }
  }

  void originWritabilityChanged() {
    if (state == State.SENDING) {
      reading();
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (origin != null) {
      origin.channel.config().setAutoRead(ctx.channel().isWritable());
    }
    ctx.fireChannelWritabilityChanged();
  }

  private void finished() {
    ctx.flush();
    MitmTunnel.Origin o = origin;
    origin = null;
    // A destination that answered before the whole request was sent is out of step with it.
    tunnel.release(o, originKeepsAlive && requestSent && state != State.CLOSING);
    if (h2 || closeAfterResponse) {
      state = State.CLOSING;
      if (!h2) {
        closeClient(ctx.channel());
      }
      return;
    }
    state = State.IDLE;
    drain();
  }

  // ---- answers ----

  /** The destination failed this exchange: 502 when nothing was answered yet, else cut off. */
  void originFailed(String why) {
    origin = null;
    if (state == State.CLOSING) {
      return;
    }
    if (!responseStarted) {
      answer(HttpResponseStatus.BAD_GATEWAY, why);
    } else {
      state = State.CLOSING;
      ctx.close();
    }
  }

  /** When {@code blocked}, answers 403 naming the hook's message; true then. */
  private boolean blocked(Optional<String> blocked, String what) {
    if (blocked.isEmpty()) {
      return false;
    }
    answer(
        HttpResponseStatus.FORBIDDEN,
        what
            + " https://"
            + request.host()
            + request.path()
            + " blocked by hook: "
            + blocked.get());
    return true;
  }

  /**
   * Answers with a line of text and ends: the HTTP/2 stream, or the HTTP/1.1 connection (a
   * connection to the destination in use is closed, as its response is not read to the end).
   */
  private void answer(HttpResponseStatus status, String text) {
    boolean wasStarted = responseStarted;
    state = State.CLOSING;
    if (buffer != null) {
      buffer.release();
      buffer = null;
    }
    releaseQueued();
    if (origin != null) {
      MitmTunnel.Origin o = origin;
      origin = null;
      tunnel.release(o, false);
    }
    tunnel.forget(this);
    if (wasStarted) {
      ctx.close();
      return;
    }
    FullHttpResponse r = Answers.response(status, Answers.PREFIX + text);
    if (h2) {
      ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
    } else {
      r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(r).addListener(f -> closeClient(ctx.channel()));
    }
  }

  /**
   * Ends the client's TLS connection once what was written went out: close_notify, then the
   * lingering close of {@link Answers}, so that what the client still sends does not reset the
   * connection before it has read the answer.
   */
  private static void closeClient(Channel ch) {
    SslHandler tls = ch.pipeline().get(SslHandler.class);
    if (tls == null) {
      ch.close();
      return;
    }
    ch.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER)
        .addListener(f -> tls.closeOutbound().addListener(g -> Answers.lingeringClose(ch)));
  }

  private void releaseQueued() {
    queued.forEach(ReferenceCountUtil::release);
    queued.clear();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    tunnel.forget(this);
    if (buffer != null) {
      buffer.release();
      buffer = null;
    }
    releaseQueued();
    if (origin != null) {
      MitmTunnel.Origin o = origin;
      origin = null;
      boolean done = state == State.IDLE;
      state = State.CLOSING;
      tunnel.release(o, done);
    }
    state = State.CLOSING;
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
