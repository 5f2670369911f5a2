package dev.confine.net;

/**
 * Hooks the egress proxy calls for allowed destinations, to inspect or block them beyond the rules.
 * A hook that throws blocks: the client gets 403 (SOCKS5: "connection not allowed by ruleset") with
 * a line ending in {@code blocked by hook: <the exception's message>}. Called on the proxy's
 * network threads: keep hooks fast, and never block in them.
 *
 * <p>{@link #onRequest} and {@link #onResponse} see only what the proxy intercepts: requests in the
 * TLS tunnels that {@code NetPolicy.mitm()} selects (see {@code docs/proxy.md}). Without hooks the
 * proxy buffers no body; with them it buffers one only when the policy asks to inspect bodies and
 * the body declares a length within the cap.
 */
public interface ProxyHooks {
  /**
   * An allowed CONNECT or SOCKS5 tunnel is about to be opened to {@code host:port} (intercepted or
   * not).
   *
   * @param host the host as the client asked for it
   * @param port the port
   * @throws Exception to block the tunnel
   */
  default void onConnect(String host, int port) throws Exception {}

  /**
   * An intercepted request is about to leave for its destination.
   *
   * @throws Exception to block it: the client gets 403 and the destination never sees it
   */
  default void onRequest(ProxyRequest request) throws Exception {}

  /**
   * The response to an intercepted request is about to reach the client.
   *
   * @throws Exception to block it: the client gets 403 instead
   */
  default void onResponse(ProxyResponse response) throws Exception {}
}
