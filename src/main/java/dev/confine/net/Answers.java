package dev.confine.net;

import dev.confine.NetMode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/** The proxy's own HTTP answers: a status and one line of text an agent can act on, then close. */
final class Answers {
  static final String PREFIX = "confine egress proxy: ";
  static final int LINGER_SECONDS = 2;

  private Answers() {}

  /** The text of a refused decision: host, port, rule or reason, and the mode. */
  static String refusal(ProxyDecision d) {
    return PREFIX
        + d.host()
        + ":"
        + d.port()
        + " "
        + (d.reason().startsWith("denied") ? d.reason() : "denied: " + d.reason())
        + " (policy mode "
        + modeName(d.mode())
        + ")";
  }

  static String modeName(NetMode mode) {
    return mode.name().toLowerCase(Locale.ROOT);
  }

  /** Writes a text answer, marked {@code Connection: close}, and closes once it is written. */
  static void sendAndClose(Channel ch, HttpResponseStatus status, String text) {
    sendAndClose(ch, response(status, text));
  }

  static void sendAndClose(Channel ch, FullHttpResponse response) {
    response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    ch.writeAndFlush(response).addListener(f -> lingeringClose(ch));
  }

  /**
   * Closes a connection the client may still be sending on without losing the answer: closing with
   * unread bytes makes the kernel reset the connection, and a reset can discard the answer before
   * the client reads it. So the proxy stops writing, reads and drops what still comes for up to
   * {@link #LINGER_SECONDS}, and closes at the client's end of stream or then.
   */
  static void lingeringClose(Channel ch) {
    if (!(ch instanceof DuplexChannel duplex) || !ch.isActive()) {
      ch.close();
      return;
    }
    duplex
        .shutdownOutput()
        .addListener(
            f -> {
              ch.config().setAutoRead(true);
              ch.eventLoop().schedule(() -> ch.close(), LINGER_SECONDS, TimeUnit.SECONDS);
            });
  }

  static FullHttpResponse response(HttpResponseStatus status, String text) {
    ByteBuf body = Unpooled.copiedBuffer(text + "\n", StandardCharsets.UTF_8);
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
    r.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
    return r;
  }
}
