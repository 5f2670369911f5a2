package dev.confine.cli;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses byte sizes as people write them on command lines: a plain number of bytes ({@code 1024}),
 * or a number (possibly with a fraction) followed by a unit, case-insensitively.
 *
 * <ul>
 *   <li>{@code k}, {@code m}, {@code g}, {@code t} and {@code KiB}, {@code MiB}, {@code GiB},
 *       {@code TiB} are binary (1024-based), as in {@code ulimit}, {@code docker --memory} and
 *       {@code java -Xmx}, where a bare {@code 64k} has always meant 65536;
 *   <li>{@code kb}, {@code mb}, {@code gb}, {@code tb} are decimal (1000-based), as SI defines
 *       them;
 *   <li>{@code b} is bytes.
 * </ul>
 *
 * <p>A fractional result is rounded down to a whole byte ({@code 0.1k} is 102), since a cap can
 * only be a whole number of bytes and rounding down never grants more than was asked.
 */
final class ByteSize {
  private static final Pattern FORM = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)([a-z]*)");

  private static final Map<String, Long> UNITS = units();

  /**
   * "" and "b" are bytes; then per prefix k, m, g, t: binary bare and with "ib", decimal with "b".
   */
  private static Map<String, Long> units() {
    Map<String, Long> units = new HashMap<>(Map.of("", 1L, "b", 1L));
    long binary = 1;
    long decimal = 1;
    for (String prefix : List.of("k", "m", "g", "t")) {
      binary <<= 10;
      decimal *= 1000;
      units.put(prefix, binary);
      units.put(prefix + "ib", binary);
      units.put(prefix + "b", decimal);
    }
    return Map.copyOf(units);
  }

  private ByteSize() {}

  /**
   * Parses {@code text} into a number of bytes.
   *
   * @param text the size, such as {@code "64k"}, {@code "1.5m"} or {@code "2GiB"}
   * @return the number of bytes, never negative
   * @throws IllegalArgumentException naming what is wrong: empty, negative, malformed, an unknown
   *     unit, or more than {@link Long#MAX_VALUE} bytes
   */
  static long parse(String text) {
    if (text == null || text.isEmpty()) {
      throw new IllegalArgumentException("size must not be empty (expected a form such as 64k)");
    }
    if (text.startsWith("-")) {
      throw new IllegalArgumentException(
          "size " + JsonString.quote(text) + " must not be negative");
    }
    Matcher m = FORM.matcher(text.toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "invalid size " + JsonString.quote(text) + " (expected a form such as 1024, 64k, 1.5m)");
    }
    Long unit = UNITS.get(m.group(2));
    if (unit == null) {
      throw new IllegalArgumentException(
          "unknown unit "
              + JsonString.quote(m.group(2))
              + " in size "
              + JsonString.quote(text)
              + " (use k, m, g, t, KiB, MiB, GiB, TiB, kb, mb, gb or tb)");
    }
    BigDecimal bytes =
        new BigDecimal(m.group(1))
            .multiply(BigDecimal.valueOf(unit))
            .setScale(0, RoundingMode.DOWN);
    if (bytes.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException("size " + JsonString.quote(text) + " is too large");
    }
    return bytes.longValueExact();
  }
}
