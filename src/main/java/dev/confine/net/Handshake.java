package dev.confine.net;

import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A client's deadline to finish asking (its first HTTP request head, or its SOCKS5 greeting,
 * authentication and command): a client that has not by then is closed, so that slow or silent
 * clients cannot hold connections open.
 */
final class Handshake {
  private final ScheduledFuture<?> deadline;

  Handshake(Channel ch, Duration timeout) {
    deadline =
        ch.eventLoop()
            .schedule(
                () -> {
                  ch.close();
                },
                timeout.toNanos(),
                TimeUnit.NANOSECONDS);
    ch.closeFuture().addListener(f -> deadline.cancel(false));
  }

  /** The client has asked: no deadline any more. */
  void done() {
    deadline.cancel(false);
  }
}
