package dev.confine.net;

/** How a client asked the egress proxy for a destination. */
public enum ProxyProtocol {
  /** A plain HTTP request in absolute form ({@code GET http://host/path}), forwarded. */
  HTTP,
  /** An HTTP {@code CONNECT host:port} tunnel. */
  CONNECT,
  /** A SOCKS5 (RFC 1928) CONNECT. */
  SOCKS5
}
