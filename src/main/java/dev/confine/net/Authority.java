package dev.confine.net;

/**
 * A {@code host[:port]} authority as clients send it (an IPv6 literal in brackets), with the
 * protocol's default port when none is given.
 *
 * @param host the host, without brackets
 * @param port the port, 1..65535
 */
record Authority(String host, int port) {

  /** The authority, or null when it is not one (empty host, a bad port, user info, a path). */
  static Authority parse(String text, int defaultPort) {
    if (text == null || text.isEmpty() || text.length() > 300) {
      return null;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c <= ' ' || c >= 0x7f || c == '/' || c == '@' || c == '?' || c == '#' || c == '\\') {
        return null;
      }
    }
    String host;
    String port = null;
    if (text.startsWith("[")) {
      int close = text.indexOf(']');
      if (close < 0) {
        return null;
      }
      host = text.substring(1, close);
      String rest = text.substring(close + 1);
      if (!rest.isEmpty()) {
        if (!rest.startsWith(":")) {
          return null;
        }
        port = rest.substring(1);
      }
      if (HostNames.ipLiteral(host).isEmpty()) {
        return null;
      }
    } else {
      int colon = text.lastIndexOf(':');
      if (colon >= 0 && text.indexOf(':') != colon) {
        return null; // an IPv6 literal without brackets
      }
      host = colon < 0 ? text : text.substring(0, colon);
      port = colon < 0 ? null : text.substring(colon + 1);
    }
    if (host.isEmpty()) {
      return null;
    }
    int p = defaultPort;
    if (port != null) {
      if (port.isEmpty()
          || port.length() > 5
          || !port.chars().allMatch(ch -> ch >= '0' && ch <= '9')) {
        return null;
      }
      p = Integer.parseInt(port);
      if (p < 1 || p > 65535) {
        return null;
      }
    }
    return new Authority(host, p);
  }

  /** {@code host:port}, the host in brackets when it is an IPv6 literal. */
  static String format(String host, int port) {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  /** This authority as text, with its port. */
  String text() {
    return format(host, port);
  }
}
