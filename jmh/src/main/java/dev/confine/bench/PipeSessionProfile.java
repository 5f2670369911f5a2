package dev.confine.bench;

import dev.confine.local.LocalRunner;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The two sides of {@link PipeSessionBench}, interleaved in one loop so that the machine's load
 * hits them alike: per round 256 MiB through a {@link LocalRunner} pipe session (read until end of
 * file) and then through {@link ProcessBuilder}'s stream, the same child and reads as the JMH
 * benchmark. Reports the MiB/s of each over all rounds and their ratio. Run it with a fixed,
 * pre-touched heap as the benchmark's fork does ({@code -Xms2g -Xmx2g -XX:+AlwaysPreTouch}).
 *
 * <p>Usage: {@code PipeSessionProfile [--rounds N] [--out pipe-profile.json]}.
 */
public final class PipeSessionProfile {
  private static final int WARMUP = 5;

  private PipeSessionProfile() {}

  public static void main(String[] args) throws Exception {
    int rounds = 30;
    Path out = Path.of("target/bench/pipe-profile.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path root = Files.createTempDirectory("confine-pipe-profile");
    LocalRunner runner = LocalRunner.create(root.toString());
    List<String> argv = List.of("head", "-c", Long.toString(Sessions.SIZE), "/dev/zero");
    long sessionNanos = 0;
    long builderNanos = 0;
    for (int i = -WARMUP; i < rounds; i++) {
      long t0 = System.nanoTime();
      try (ProcessSession s =
          runner.start(ProcessSpec.pipes(argv).withOptions(Sessions.THROUGHPUT_OPTIONS))) {
        Sessions.checkLength(Sessions.drain(s), Sessions.SIZE);
        Checks.exitedZero(s.waitFor().code());
      }
      long t1 = System.nanoTime();
      Process p =
          new ProcessBuilder(argv).directory(root.toFile()).redirectErrorStream(true).start();
      p.getOutputStream().close();
      try (InputStream in = p.getInputStream()) {
        Sessions.checkLength(Sessions.drain(in), Sessions.SIZE);
      }
      Checks.exitedZero(p.waitFor());
      long t2 = System.nanoTime();
      if (i >= 0) {
        sessionNanos += t1 - t0;
        builderNanos += t2 - t1;
      }
    }
    Files.delete(root);
    double mib = (double) rounds * Sessions.SIZE / Sessions.MIB;
    double session = mib / (sessionNanos / 1e9);
    double builder = mib / (builderNanos / 1e9);
    System.out.printf(
        Locale.ROOT,
        "pipe session %.0f MiB/s, ProcessBuilder %.0f MiB/s over %d rounds: %.2fx%n",
        session,
        builder,
        rounds,
        session / builder);
    Files.writeString(
        out,
        String.format(
            Locale.ROOT,
            "{\"rounds\":%d,\"sessionMiBs\":%.1f,\"processBuilderMiBs\":%.1f}%n",
            rounds,
            session,
            builder),
        StandardCharsets.UTF_8);
  }
}
