package dev.confine.net;

/**
 * An absolute-form request target ({@code http://host[:port]/path?query}, RFC 9112 §3.2.2), the
 * form clients send to a forwarding proxy.
 *
 * @param authority where it goes (port 80 when none)
 * @param pathAndQuery the origin-form target, {@code /} when the URI has no path; never a fragment
 */
record AbsoluteUri(Authority authority, String pathAndQuery) {

  /** The target, or null when it is not an absolute {@code http://} URI with a valid authority. */
  static AbsoluteUri parse(String uri) {
    if (uri == null || !uri.regionMatches(true, 0, "http://", 0, 7)) {
      return null;
    }
    int start = 7;
    int end = start;
    while (end < uri.length() && "/?#".indexOf(uri.charAt(end)) < 0) {
      end++;
    }
    Authority authority = Authority.parse(uri.substring(start, end), 80);
    if (authority == null) {
      return null;
    }
    String rest = uri.substring(end);
    int hash = rest.indexOf('#');
    if (hash >= 0) {
      rest = rest.substring(0, hash);
    }
    if (rest.isEmpty() || rest.startsWith("?")) {
      rest = "/" + rest;
    }
    return new AbsoluteUri(authority, rest);
  }
}
