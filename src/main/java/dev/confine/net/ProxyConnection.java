package dev.confine.net;

import java.time.Duration;

/**
 * A finished connection of the egress proxy to a destination (or to its upstream on its behalf): a
 * CONNECT or SOCKS5 tunnel, or the connection that carried forwarded HTTP requests.
 *
 * @param decision the decision that opened it
 * @param bytesOut bytes the client sent towards the destination (for forwarded HTTP, body bytes)
 * @param bytesIn bytes the destination sent back to the client (for forwarded HTTP, body bytes)
 * @param duration from the decision to the close
 * @param error why the connection could not be made or ended abnormally, or empty
 */
public record ProxyConnection(
    ProxyDecision decision, long bytesOut, long bytesIn, Duration duration, String error) {}
