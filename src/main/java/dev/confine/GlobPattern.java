package dev.confine;

import java.util.BitSet;

/**
 * A shell glob over one path element, with the rules of Go's {@code path.Match}: {@code *} matches
 * any run of characters other than '/', {@code ?} one such character, {@code [...]} one character
 * of a class ({@code [^...]} negated, {@code a-z} ranges, {@code \} escapes; a class may match '/',
 * and a reversed range such as {@code z-a} matches nothing), {@code \x} the character x. The whole
 * name must match; characters are Unicode code points. A malformed pattern never matches.
 */
final class GlobPattern {
  private final String text;
  private final int[] pattern;
  private final boolean wellFormed;

  GlobPattern(String pattern) {
    this.text = pattern;
    this.pattern = pattern == null ? new int[0] : pattern.codePoints().toArray();
    this.wellFormed = pattern != null && checkSyntax(this.pattern);
  }

  boolean matches(String name) {
    return wellFormed && match(0, name.codePoints().toArray(), 0, new BitSet());
  }

  // failed holds the (pattern, input) positions already known not to match after a star, which
  // keeps patterns with several stars polynomial in the input instead of exponential.
  private boolean match(int p, int[] s, int i, BitSet failed) {
    while (p < pattern.length) {
      int c = pattern[p];
      if (c == '*') {
        while (p < pattern.length && pattern[p] == '*') {
          p++;
        }
        for (int j = i; j <= s.length; j++) {
          int key = p * (s.length + 1) + j;
          if (!failed.get(key)) {
            if (match(p, s, j, failed)) {
              return true;
            }
            failed.set(key);
          }
          if (j < s.length && s[j] == '/') {
            return false;
          }
        }
        return false;
      }
      if (i >= s.length) {
        return false;
      }
      int ch = s[i];
      switch (c) {
        case '?' -> {
          if (ch == '/') {
            return false;
          }
          p++;
        }
        case '[' -> {
          int end = classEnd(p);
          if (!classMatches(p + 1, end, ch)) {
            return false;
          }
          p = end + 1;
        }
        case '\\' -> {
          if (pattern[p + 1] != ch) {
            return false;
          }
          p += 2;
        }
        default -> {
          if (c != ch) {
            return false;
          }
          p++;
        }
      }
      i++;
    }
    return i == s.length;
  }

  /** Index of the ']' closing the class that opens at {@code open}; the syntax is known good. */
  private int classEnd(int open) {
    int q = open + 1;
    if (pattern[q] == '^') {
      q++;
    }
    do {
      if (pattern[q] == '\\') {
        q++;
      }
      q++;
    } while (pattern[q] != ']');
    return q;
  }

  private boolean classMatches(int from, int end, int ch) {
    boolean negated = pattern[from] == '^';
    int q = negated ? from + 1 : from;
    boolean hit = false;
    while (q < end) {
      int lo = pattern[q] == '\\' ? pattern[++q] : pattern[q];
      q++;
      int hi = lo;
      if (pattern[q] == '-') {
        q++;
        hi = pattern[q] == '\\' ? pattern[++q] : pattern[q];
        q++;
      }
      if (lo <= ch && ch <= hi) {
        hit = true;
      }
    }
    return hit != negated;
  }

  /** Go's path.Match syntax: classes closed and non-empty, no bare '-' or ']', no trailing '\'. */
  private static boolean checkSyntax(int[] p) {
    int i = 0;
    while (i < p.length) {
      if (p[i] == '\\') {
        if (i + 1 >= p.length) {
          return false;
        }
        i += 2;
      } else if (p[i] == '[') {
        i++;
        if (i < p.length && p[i] == '^') {
          i++;
        }
        int items = 0;
        while (true) {
          if (i >= p.length) {
            return false;
          }
          if (p[i] == ']' && items > 0) {
            i++;
            break;
          }
          i = classItemEnd(p, i);
          if (i < 0) {
            return false;
          }
          if (i < p.length && p[i] == '-') {
            i = classItemEnd(p, i + 1);
            if (i < 0) {
              return false;
            }
          }
          items++;
        }
      } else {
        i++;
      }
    }
    return true;
  }

  /** The index after one class character at {@code i}, or -1 when there is none (Go's getEsc). */
  private static int classItemEnd(int[] p, int i) {
    if (i >= p.length || p[i] == '-' || p[i] == ']') {
      return -1;
    }
    if (p[i] == '\\') {
      i++;
      if (i >= p.length) {
        return -1;
      }
    }
    return i + 1;
  }

  @Override
  public String toString() {
    return text;
  }
}
