package dev.confine;

import java.util.BitSet;

/**
 * A shell glob over one path element, with the rules of Go's {@code path.Match}: {@code *} matches
 * any run of characters other than '/', {@code ?} one such character, {@code [...]} a class ({@code
 * [^...]} negated, {@code a-z} ranges, {@code \} escapes), {@code \x} the character x. The whole
 * name must match. A malformed pattern never matches anything.
 */
final class GlobPattern {
  private final String pattern;
  private final boolean wellFormed;

  GlobPattern(String pattern) {
    this.pattern = pattern;
    this.wellFormed = pattern != null && checkSyntax(pattern);
  }

  boolean matches(String name) {
    return wellFormed && match(0, name, 0, new BitSet());
  }

  // failed holds the (pattern, input) positions already known not to match after a star, which
  // keeps patterns with several stars linear in the input instead of exponential.
  private boolean match(int p, String s, int i, BitSet failed) {
    while (p < pattern.length()) {
      char c = pattern.charAt(p);
      if (c == '*') {
        while (p < pattern.length() && pattern.charAt(p) == '*') {
          p++;
        }
        if (p == pattern.length()) {
          return s.indexOf('/', i) < 0;
        }
        for (int j = i; j <= s.length(); j++) {
          int key = p * (s.length() + 1) + j;
          if (!failed.get(key)) {
            if (match(p, s, j, failed)) {
              return true;
            }
            failed.set(key);
          }
          if (j < s.length() && s.charAt(j) == '/') {
            return false;
          }
        }
        return false;
      }
      if (i >= s.length()) {
        return false;
      }
      char ch = s.charAt(i);
      switch (c) {
        case '?' -> {
          if (ch == '/') {
            return false;
          }
          p++;
        }
        case '[' -> {
          int end = classEnd(p);
          if (ch == '/' || !classMatches(p + 1, end, ch)) {
            return false;
          }
          p = end + 1;
        }
        case '\\' -> {
          if (pattern.charAt(p + 1) != ch) {
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
    return i == s.length();
  }

  /** Index of the ']' closing the class that opens at {@code open}; the syntax is known good. */
  private int classEnd(int open) {
    int q = open + 1;
    if (q < pattern.length() && pattern.charAt(q) == '^') {
      q++;
    }
    while (pattern.charAt(q) != ']') {
      if (pattern.charAt(q) == '\\') {
        q++;
      }
      q++;
    }
    return q;
  }

  private boolean classMatches(int from, int end, char ch) {
    boolean negated = pattern.charAt(from) == '^';
    int q = negated ? from + 1 : from;
    boolean hit = false;
    while (q < end) {
      char lo = pattern.charAt(q);
      if (lo == '\\') {
        lo = pattern.charAt(++q);
      }
      q++;
      char hi = lo;
      if (q + 1 < end && pattern.charAt(q) == '-') {
        hi = pattern.charAt(q + 1);
        if (hi == '\\') {
          hi = pattern.charAt(q + 2);
          q++;
        }
        q += 2;
      }
      if (lo <= ch && ch <= hi) {
        hit = true;
      }
    }
    return hit != negated;
  }

  /** Go's path.Match syntax: classes closed and non-empty, ranges ordered, no trailing '\'. */
  private static boolean checkSyntax(String p) {
    int i = 0;
    while (i < p.length()) {
      char c = p.charAt(i);
      if (c == '\\') {
        if (i + 1 >= p.length()) {
          return false;
        }
        i += 2;
      } else if (c == '[') {
        i++;
        if (i < p.length() && p.charAt(i) == '^') {
          i++;
        }
        int items = 0;
        while (true) {
          if (i >= p.length()) {
            return false;
          }
          char lo = p.charAt(i);
          if (lo == ']' && items > 0) {
            i++;
            break;
          }
          if (lo == '-' || lo == ']') {
            return false;
          }
          if (lo == '\\') {
            if (++i >= p.length()) {
              return false;
            }
            lo = p.charAt(i);
          }
          i++;
          if (i < p.length() && p.charAt(i) == '-') {
            i++;
            if (i >= p.length()) {
              return false;
            }
            char hi = p.charAt(i);
            if (hi == ']' || hi == '-') {
              return false;
            }
            if (hi == '\\') {
              if (++i >= p.length()) {
                return false;
              }
              hi = p.charAt(i);
            }
            if (hi < lo) {
              return false;
            }
            i++;
          }
          items++;
        }
      } else {
        i++;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return pattern;
  }
}
