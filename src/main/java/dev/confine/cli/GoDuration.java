package dev.confine.cli;

import java.time.Duration;
import java.util.Map;

/**
 * Parses durations in the syntax of Go's {@code time.ParseDuration}, which is what users of the Go
 * seed (and of tools such as {@code kubectl} and {@code docker}) type: a sequence of decimal
 * numbers, each with an optional fraction and a unit, such as {@code "300ms"}, {@code "1.5h"} or
 * {@code "2h45m"}. Units are {@code ns}, {@code us} (or {@code µs}, {@code μs}), {@code ms}, {@code
 * s}, {@code m} and {@code h}; {@code "0"} alone needs no unit.
 *
 * <p>The grammar and the range (at most 2^63-1 nanoseconds, about 292 years) are Go's, so a value
 * that works with the seed works here. Unlike Go, a negative duration is refused, because every
 * caller in Confine means a deadline or a budget by it.
 */
final class GoDuration {
  /** 2^63 as an unsigned 64-bit value: Go accumulates into a uint64 and checks against it. */
  private static final long TWO_TO_63 = Long.MIN_VALUE;

  private static final long NANOS_PER_MICRO = 1_000L;
  private static final long NANOS_PER_MILLI = 1_000_000L;
  private static final long NANOS_PER_SECOND = 1_000_000_000L;

  private static final Map<String, Long> UNITS =
      Map.of(
          "ns", 1L,
          "us", NANOS_PER_MICRO,
          "\u00b5s", NANOS_PER_MICRO, // MICRO SIGN, as Go accepts
          "\u03bcs", NANOS_PER_MICRO, // GREEK SMALL LETTER MU, as Go accepts
          "ms", NANOS_PER_MILLI,
          "s", NANOS_PER_SECOND,
          "m", 60 * NANOS_PER_SECOND,
          "h", 3600 * NANOS_PER_SECOND);

  private GoDuration() {}

  /**
   * Parses {@code text} as Go's {@code time.ParseDuration} does, refusing negative results.
   *
   * @param text the duration, such as {@code "1m30s"}
   * @return the duration, never negative
   * @throws IllegalArgumentException naming what is wrong: empty, malformed, missing or unknown
   *     unit, out of range, or negative
   */
  static Duration parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("duration must not be null");
    }
    String s = text;
    int i = 0;
    boolean negative = false;
    if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
      negative = s.charAt(0) == '-';
      i = 1;
    }
    if (s.substring(i).equals("0")) {
      return Duration.ZERO;
    }
    if (i == s.length()) {
      throw invalid(text);
    }
    long total = 0; // unsigned, at most 2^63
    while (i < s.length()) {
      char c = s.charAt(i);
      if (!(c == '.' || isDigit(c))) {
        throw invalid(text);
      }
      // The integer part: Go fails on overflow here rather than losing digits.
      int start = i;
      long whole = 0; // unsigned, at most 2^63
      for (; i < s.length() && isDigit(s.charAt(i)); i++) {
        if (Long.compareUnsigned(whole, Long.divideUnsigned(TWO_TO_63, 10)) > 0) {
          throw invalid(text);
        }
        whole = whole * 10 + (s.charAt(i) - '0');
        if (Long.compareUnsigned(whole, TWO_TO_63) > 0) {
          throw invalid(text);
        }
      }
      boolean digitsBefore = i > start;

      // The fraction: Go stops gaining precision instead of failing on long fractions.
      long fraction = 0;
      double scale = 1;
      boolean digitsAfter = false;
      if (i < s.length() && s.charAt(i) == '.') {
        i++;
        boolean saturated = false;
        for (; i < s.length() && isDigit(s.charAt(i)); i++) {
          digitsAfter = true;
          if (saturated) {
            continue;
          }
          long next = fraction * 10 + (s.charAt(i) - '0');
          if (fraction > Long.MAX_VALUE / 10 || Long.compareUnsigned(next, TWO_TO_63) > 0) {
            saturated = true;
            continue;
          }
          fraction = next;
          scale *= 10;
        }
      }
      if (!digitsBefore && !digitsAfter) {
        throw invalid(text); // "." or ".s": a number without digits
      }

      int unitStart = i;
      for (; i < s.length() && !(s.charAt(i) == '.' || isDigit(s.charAt(i))); i++) {}
      if (i == unitStart) {
        throw new IllegalArgumentException(
            "missing unit in duration "
                + JsonString.quote(text)
                + " (use ns, us, ms, s, m or h, as in \"10s\")");
      }
      String unitName = s.substring(unitStart, i);
      Long unit = UNITS.get(unitName);
      if (unit == null) {
        throw new IllegalArgumentException(
            "unknown unit "
                + JsonString.quote(unitName)
                + " in duration "
                + JsonString.quote(text)
                + " (use ns, us, ms, s, m or h)");
      }
      if (Long.compareUnsigned(whole, Long.divideUnsigned(TWO_TO_63, unit)) > 0) {
        throw outOfRange(text);
      }
      long value = whole * unit;
      if (fraction != 0) {
        // A double is precise enough: the fraction of the largest unit is below 3.6e12 ns.
        value += (long) (unsignedToDouble(fraction) * (unit / scale));
        if (Long.compareUnsigned(value, TWO_TO_63) > 0) {
          throw outOfRange(text);
        }
      }
      // Go lets this sum wrap past 2^64 in one corner case; checking before adding avoids that.
      if (Long.compareUnsigned(value, TWO_TO_63 - total) > 0) {
        throw outOfRange(text);
      }
      total += value;
    }
    if (total == TWO_TO_63 && !negative) {
      throw outOfRange(text);
    }
    if (negative && total != 0) {
      throw new IllegalArgumentException(
          "duration " + JsonString.quote(text) + " must not be negative");
    }
    return Duration.ofNanos(total);
  }

  private static double unsignedToDouble(long unsigned) {
    return unsigned >= 0 ? unsigned : 0x1p63 + (unsigned & Long.MAX_VALUE);
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static IllegalArgumentException invalid(String text) {
    return new IllegalArgumentException(
        "invalid duration "
            + JsonString.quote(text)
            + " (expected a form such as 10s, 1m30s, 250ms)");
  }

  private static IllegalArgumentException outOfRange(String text) {
    return new IllegalArgumentException(
        "duration " + JsonString.quote(text) + " is out of range (at most about 292 years)");
  }
}
