package dev.confine.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** The summary of an interleaved profile: each side's mean and median time per op. */
final class InterleavedTimes {
  private InterleavedTimes() {}

  /**
   * Appends {@code "name":{"meanUs":..,"medianUs":..}} for every side to {@code json} and prints a
   * line per side, its name padded to {@code width}.
   *
   * @param nanos the time of every op, per side, in the order of {@code names}
   * @return the mean of each side, in microseconds
   */
  static double[] summarize(StringBuilder json, List<String> names, long[][] nanos, int width) {
    double[] means = new double[names.size()];
    for (int k = 0; k < names.size(); k++) {
      long[] n = nanos[k];
      means[k] = Arrays.stream(n).average().orElse(Double.NaN) / 1000.0;
      long[] sorted = n.clone();
      Arrays.sort(sorted);
      double median = sorted[sorted.length / 2] / 1000.0;
      json.append(k == 0 ? "" : ",")
          .append(
              String.format(
                  Locale.ROOT,
                  "\"%s\":{\"meanUs\":%.1f,\"medianUs\":%.1f}",
                  names.get(k),
                  means[k],
                  median));
      System.out.printf(
          Locale.ROOT,
          "%-" + width + "s mean %8.1f us, median %8.1f us%n",
          names.get(k),
          means[k],
          median);
    }
    return means;
  }
}
