package dev.confine.host;

import dev.confine.ByteStrings;

/**
 * Go's {@code strconv.Quote} (the {@code %q} verb for a string), for the backends whose messages
 * and generated text follow the seed's (bwrap's messages, the seatbelt profile's paths): in double
 * quotes; {@code "} and {@code \} escaped with a backslash; printable characters as they are;
 * {@code \a \b \f \n \r \t \v}; other control characters and DEL as {@code \xNN}; other
 * non-printable characters as <code>
 * &#92;uNNNN
 * </code> or {@code \UNNNNNNNN} (lowercase hex, as Go writes it).
 *
 * <p>Strings carry bytes the way {@link ByteStrings} defines: a byte that is not part of
 * well-formed UTF-8 is the escape U+DC80 + byte. Go quotes such a byte as {@code \xNN}, and so does
 * this; escapes that together spell well-formed UTF-8 are that character, as Go's decoder sees the
 * same bytes. An unpaired surrogate that stands for no byte (the caller's own malformed text; Go's
 * strings cannot hold one) is shown as <code>&#92;uNNNN</code>.
 *
 * <p>"Printable" is Go's {@code unicode.IsPrint}: letters, marks, numbers, punctuation and symbols
 * (general categories L, M, N, P, S) and the ASCII space, taken from the JDK's Unicode tables,
 * whose version may differ from Go's for characters assigned recently.
 */
public final class GoQuote {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private GoQuote() {}

  /** {@code s} quoted as Go's {@code %q} quotes it; "null" for null. */
  public static String of(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (isByteEscape(c)) {
        // A run of byte escapes: decode its bytes as Go does (a real character before or after a
        // run cannot join it: its bytes are a whole sequence, and no sequence starts with a
        // continuation byte).
        int end = i;
        while (end < s.length() && isByteEscape(s.charAt(end))) {
          end++;
        }
        appendBytes(out, s, i, end);
        i = end;
        continue;
      }
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      appendRune(out, cp);
    }
    return out.append('"').toString();
  }

  private static boolean isByteEscape(char c) {
    return c >= '\uDC80' && c <= '\uDCFF';
  }

  /**
   * The bytes escaped in {@code s[from, to)}, decoded as UTF-8 ({@link ByteStrings#decode}, which
   * decodes as Go does: no overlong forms, no surrogates, nothing above U+10FFFF), each rune as a
   * rune and each byte left escaped, not part of well-formed UTF-8, as {@code \xNN}.
   */
  private static void appendBytes(StringBuilder out, String s, int from, int to) {
    byte[] bytes = new byte[to - from];
    for (int k = from; k < to; k++) {
      bytes[k - from] = (byte) (s.charAt(k) - '\uDC00');
    }
    String decoded = ByteStrings.decode(bytes);
    int i = 0;
    while (i < decoded.length()) {
      int cp = decoded.codePointAt(i);
      i += Character.charCount(cp);
      if (cp >= 0xDC80 && cp <= 0xDCFF) {
        appendHex(out.append("\\x"), cp - 0xDC00, 2);
      } else {
        appendRune(out, cp);
      }
    }
  }

  /** Go's {@code appendEscapedRune} for a double-quoted, not ASCII-only, not graphic-only quote. */
  private static void appendRune(StringBuilder out, int r) {
    if (r == '"' || r == '\\') {
      out.append('\\').append((char) r);
      return;
    }
    if (isPrint(r)) {
      out.appendCodePoint(r);
      return;
    }
    switch (r) {
      case 0x07 -> out.append("\\a");
      case '\b' -> out.append("\\b");
      case '\f' -> out.append("\\f");
      case '\n' -> out.append("\\n");
      case '\r' -> out.append("\\r");
      case '\t' -> out.append("\\t");
      case 0x0b -> out.append("\\v");
      default -> {
        if (r < ' ' || r == 0x7f) {
          appendHex(out.append("\\x"), r, 2);
        } else if (r < 0x10000) {
          appendHex(out.append("\\u"), r, 4);
        } else {
          appendHex(out.append("\\U"), r, 8);
        }
      }
    }
  }

  /** Go's {@code unicode.IsPrint}: the ASCII space and the general categories L, M, N, P and S. */
  public static boolean isPrint(int r) {
    if (r == ' ') {
      return true;
    }
    return switch (Character.getType(r)) {
      case Character.UPPERCASE_LETTER,
          Character.LOWERCASE_LETTER,
          Character.TITLECASE_LETTER,
          Character.MODIFIER_LETTER,
          Character.OTHER_LETTER,
          Character.NON_SPACING_MARK,
          Character.ENCLOSING_MARK,
          Character.COMBINING_SPACING_MARK,
          Character.DECIMAL_DIGIT_NUMBER,
          Character.LETTER_NUMBER,
          Character.OTHER_NUMBER,
          Character.CONNECTOR_PUNCTUATION,
          Character.DASH_PUNCTUATION,
          Character.START_PUNCTUATION,
          Character.END_PUNCTUATION,
          Character.INITIAL_QUOTE_PUNCTUATION,
          Character.FINAL_QUOTE_PUNCTUATION,
          Character.OTHER_PUNCTUATION,
          Character.MATH_SYMBOL,
          Character.CURRENCY_SYMBOL,
          Character.MODIFIER_SYMBOL,
          Character.OTHER_SYMBOL ->
          true;
      default -> false;
    };
  }

  private static void appendHex(StringBuilder out, int value, int digits) {
    for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
      out.append(HEX[(value >> shift) & 0xf]);
    }
  }
}
