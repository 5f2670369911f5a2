package dev.confine.net;

/**
 * Hooks the egress proxy calls for allowed destinations, to inspect or block them beyond the rules.
 * A hook that throws blocks the destination: the client gets 403 (SOCKS5: "connection not allowed
 * by ruleset") naming the hook. Called on the proxy's network threads: keep hooks fast.
 */
public interface ProxyHooks {
  /**
   * An allowed CONNECT or SOCKS5 tunnel is about to be opened to {@code host:port}.
   *
   * @param host the host as the client asked for it
   * @param port the port
   * @throws Exception to block the tunnel
   */
  default void onConnect(String host, int port) throws Exception {}
}
