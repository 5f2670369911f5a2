package dev.confine.net;

/** How a client asked the egress proxy for a destination. */
public enum ProxyProtocol {
  /** A plain HTTP request in absolute form ({@code GET http://host/path}), forwarded. */
  HTTP,
  /** An HTTP {@code CONNECT host:port} tunnel. */
  CONNECT,
  /** A SOCKS5 (RFC 1928) CONNECT. */
  SOCKS5,
  /**
   * A connection a confined child made to another address, sent to the proxy by the connect
   * supervisor and decided by the name it carries (SNI, Host, the proxy's DNS answer) or its
   * address.
   */
  TRANSPARENT,
  /**
   * A DNS question (A or AAAA) of a supervised child, answered by the proxy with the addresses it
   * would connect to; no port ({@code 0} in the decision): any allow rule of the name counts.
   */
  DNS
}
