package dev.confine.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The two sides of {@link PipeSessionBench} ({@link PipeSessionBench#localRunner} and {@link
 * PipeSessionBench#processBuilder}: 256 MiB through a pipe session and through {@link
 * ProcessBuilder}'s stream), interleaved in one loop so that the machine's load hits them alike,
 * the order swapped every round (whichever goes second finds the machine as the first left it).
 * Prints the MiB/s of each over all rounds and their ratio, and writes every round's two times, so
 * that {@code jmh/report.py} can give the ratio a confidence interval: this VM's speed varies by a
 * third from one run of the child to the next, and only the interval says whether a ratio a few per
 * cent above or below 1.0 means anything. Run it with a fixed, pre-touched heap as the benchmark's
 * fork does ({@code -Xms2g -Xmx2g -XX:+AlwaysPreTouch}).
 *
 * <p>Usage: {@code PipeSessionProfile [--rounds N] [--out pipe-profile.json]}.
 */
public final class PipeSessionProfile {
  private static final int WARMUP = 5;

  private PipeSessionProfile() {}

  /** One side of a round. */
  @FunctionalInterface
  private interface Side {
    long run() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    int rounds = 300;
    Path out = Path.of("target/bench/pipe-profile.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    PipeSessionBench bench = new PipeSessionBench();
    bench.setUp();
    long[] sessionNanos = new long[rounds];
    long[] builderNanos = new long[rounds];
    try {
      for (int i = -WARMUP; i < rounds; i++) {
        boolean builderFirst = (i & 1) != 0;
        long builder = builderFirst ? nanos(bench::processBuilder) : 0;
        long session = nanos(bench::localRunner);
        if (!builderFirst) {
          builder = nanos(bench::processBuilder);
        }
        if (i >= 0) {
          sessionNanos[i] = session;
          builderNanos[i] = builder;
        }
      }
    } finally {
      bench.tearDown();
    }
    double mib = (double) rounds * Sessions.SIZE / Sessions.MIB;
    double session = mib / (Arrays.stream(sessionNanos).sum() / 1e9);
    double builder = mib / (Arrays.stream(builderNanos).sum() / 1e9);
    System.out.printf(
        Locale.ROOT,
        "pipe session %.0f MiB/s, ProcessBuilder %.0f MiB/s over %d rounds: %.3fx%n",
        session,
        builder,
        rounds,
        session / builder);
    Files.writeString(
        out,
        String.format(
            Locale.ROOT,
            "{\"rounds\":%d,\"sessionMiBs\":%.1f,\"processBuilderMiBs\":%.1f,"
                + "\"sessionNanos\":[%s],\"processBuilderNanos\":[%s]}%n",
            rounds,
            session,
            builder,
            join(sessionNanos),
            join(builderNanos)),
        StandardCharsets.UTF_8);
  }

  private static long nanos(Side side) throws Exception {
    long t0 = System.nanoTime();
    side.run();
    return System.nanoTime() - t0;
  }

  private static String join(long[] values) {
    return Arrays.stream(values).mapToObj(Long::toString).collect(Collectors.joining(","));
  }
}
