package dev.confine;

import java.util.Arrays;
import java.util.Objects;

/**
 * How Confine carries byte strings in Java {@link String}s: a command, its arguments, environment
 * names and values, and the working directory all reach the kernel as bytes, and on Linux those
 * bytes need not be UTF-8.
 *
 * <p>The encoding is UTF-8, extended so that a String can stand for any byte string: every byte
 * that is not part of a well-formed UTF-8 sequence (a byte from 0x80 to 0xFF) is carried as the
 * lone low surrogate {@code U+DC00 + byte}, that is U+DC80 to U+DCFF. This is Python's
 * "surrogateescape" error handler (PEP 383). So:
 *
 * <ul>
 *   <li>{@code encode(decode(bytes))} gives back exactly {@code bytes}, for every byte array;
 *   <li>well-formed UTF-8 decodes to the same String as {@code new String(bytes, UTF_8)}, and
 *       well-formed text (no unpaired surrogate) encodes to the same bytes as {@code
 *       s.getBytes(UTF_8)}: callers that only use text never see the escapes;
 *   <li>a String that holds an escape is not text: {@code java.nio.file} cannot name a file with it
 *       ({@link java.nio.file.InvalidPathException}), and printing it shows a replacement
 *       character. Confine's runners take such Strings wherever they take a command, an argument,
 *       an environment entry or a working directory, and pass their bytes on verbatim.
 * </ul>
 *
 * <p>An unpaired surrogate that stands for no byte (U+D800 to U+DC7F unpaired, or U+DD00 to U+DFFF)
 * has no byte form: {@link #encode} writes {@code '?'} for it, as {@link String#getBytes} does. A
 * lone high surrogate in the caller's own text directly followed by an escape reads as a surrogate
 * pair; {@link #decode} never produces one, so Strings it made, and concatenations of them, are
 * never ambiguous.
 *
 * <p>The {@code confine} command line reads its own arguments as raw bytes and decodes them this
 * way, so bytes given on the command line reach the child unchanged whatever the JVM's locale.
 */
public final class ByteStrings {
  private static final char ESCAPE_BASE = '\uDC00';
  private static final char FIRST_ESCAPE = '\uDC80';
  private static final char LAST_ESCAPE = '\uDCFF';

  private ByteStrings() {}

  /**
   * {@code bytes} as a String: well-formed UTF-8 as its characters, every other byte as its escape
   * U+DC80 to U+DCFF.
   */
  public static String decode(byte[] bytes) {
    return decode(bytes, 0, bytes.length);
  }

  /** As {@link #decode(byte[])}, of {@code length} bytes from {@code offset}. */
  public static String decode(byte[] bytes, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, bytes.length);
    StringBuilder sb = new StringBuilder(length);
    int end = offset + length;
    int i = offset;
    while (i < end) {
      int b0 = bytes[i] & 0xff;
      if (b0 < 0x80) {
        sb.append((char) b0);
        i++;
        continue;
      }
      int len = sequenceLength(bytes, i, end);
      if (len == 0) {
        sb.append((char) (ESCAPE_BASE + b0));
        i++;
        continue;
      }
      int cp = b0 & (0xff >> (len + 1));
      for (int k = 1; k < len; k++) {
        cp = (cp << 6) | (bytes[i + k] & 0x3f);
      }
      sb.appendCodePoint(cp);
      i += len;
    }
    return sb.toString();
  }

  /**
   * The length of the well-formed UTF-8 sequence that starts at {@code i} (a byte of 0x80 or more),
   * or 0 when there is none: the ranges of the Unicode Standard's table 3-7, which leave out
   * overlong forms, encoded surrogates and code points past U+10FFFF.
   */
  private static int sequenceLength(byte[] bytes, int i, int end) {
    int b0 = bytes[i] & 0xff;
    int len;
    int lo = 0x80;
    int hi = 0xbf;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      len = 2;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      len = 3;
      if (b0 == 0xe0) {
        lo = 0xa0;
      } else if (b0 == 0xed) {
        hi = 0x9f;
      }
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      len = 4;
      if (b0 == 0xf0) {
        lo = 0x90;
      } else if (b0 == 0xf4) {
        hi = 0x8f;
      }
    } else {
      return 0;
    }
    if (i + len > end) {
      return 0;
    }
    int b1 = bytes[i + 1] & 0xff;
    if (b1 < lo || b1 > hi) {
      return 0;
    }
    for (int k = 2; k < len; k++) {
      int b = bytes[i + k] & 0xff;
      if (b < 0x80 || b > 0xbf) {
        return 0;
      }
    }
    return len;
  }

  /**
   * The bytes {@code s} stands for: its text as UTF-8, each escape U+DC80 to U+DCFF as its byte,
   * and {@code '?'} for an unpaired surrogate that stands for no byte.
   */
  public static byte[] encode(String s) {
    int n = s.length();
    byte[] out = new byte[n * 3];
    int j = 0;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        out[j++] = (byte) c;
      } else if (c < 0x800) {
        out[j++] = (byte) (0xc0 | (c >> 6));
        out[j++] = (byte) (0x80 | (c & 0x3f));
      } else if (Character.isHighSurrogate(c)
          && i + 1 < n
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        int cp = Character.toCodePoint(c, s.charAt(++i));
        out[j++] = (byte) (0xf0 | (cp >> 18));
        out[j++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
        out[j++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
        out[j++] = (byte) (0x80 | (cp & 0x3f));
      } else if (c >= FIRST_ESCAPE && c <= LAST_ESCAPE) {
        out[j++] = (byte) (c - ESCAPE_BASE);
      } else if (Character.isSurrogate(c)) {
        out[j++] = '?';
      } else {
        out[j++] = (byte) (0xe0 | (c >> 12));
        out[j++] = (byte) (0x80 | ((c >> 6) & 0x3f));
        out[j++] = (byte) (0x80 | (c & 0x3f));
      }
    }
    return Arrays.copyOf(out, j);
  }

  /**
   * Whether {@code s} is text: no escape and no other unpaired surrogate, so that it encodes as
   * {@code s.getBytes(UTF_8)} does and any Java API that takes text can carry it.
   */
  public static boolean isText(String s) {
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (!Character.isSurrogate(c)) {
        continue;
      }
      if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
        continue;
      }
      return false;
    }
    return true;
  }
}
