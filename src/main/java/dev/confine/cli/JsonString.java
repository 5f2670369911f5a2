package dev.confine.cli;

/**
 * Writes strings as JSON string literals. Error messages use the same form to quote what the user
 * typed, so that empty text and control characters stay visible.
 */
final class JsonString {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private JsonString() {}

  /** {@code s} as a JSON string literal, quotes included. */
  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2);
    appendQuoted(b, s);
    return b.toString();
  }

  /**
   * Appends {@code s} to {@code b} as a JSON string literal: quote, backslash, newline, carriage
   * return and tab get their short escapes, every other control character as <code>&#92;u00XX
   * </code>; the rest (non-ASCII included) is written as is, since the output is UTF-8.
   */
  static void appendQuoted(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }
}
