package dev.confine.net;

import io.netty.handler.codec.TooLongFrameException;

/**
 * Client- and user-supplied text in the proxy's messages: quoted, control characters and non-ASCII
 * escaped (a hostile client must not write to the terminal or the log through them), and cut at 200
 * characters.
 */
final class Texts {
  private static final int MAX = 200;

  private Texts() {}

  /** A failure in a few words: its message, or its kind when it has none. */
  static String describe(Throwable cause) {
    if (cause instanceof TooLongFrameException) {
      return "too long (" + cause.getMessage() + ")";
    }
    return cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
  }

  static String quote(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder(Math.min(s.length(), MAX) + 8).append('"');
    for (int i = 0; i < s.length() && i < MAX; i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20 || c >= 0x7f) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    if (s.length() > MAX) {
      b.append("...");
    }
    return b.append('"').toString();
  }
}
