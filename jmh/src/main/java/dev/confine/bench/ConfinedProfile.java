package dev.confine.bench;

import dev.confine.Capability.Dimension;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.Runner;
import dev.confine.confined.ConfinedRunner;
import dev.confine.local.LocalRunner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The same three execs as {@link ConfinedBench}, interleaved in one loop so that the machine's load
 * hits them alike: per iteration {@code /bin/true} through {@link LocalRunner}, through {@link
 * ConfinedRunner} with {@code DENY_ALL} as the host allows (a network namespace as root), and
 * forced rootless, in an order that rotates every iteration. Reports the mean and median wall time
 * per exec of each, and the ratios of the means (throughput confined / local).
 *
 * <p>Usage: {@code ConfinedProfile [--iterations N] [--out confined-profile.json]}.
 */
public final class ConfinedProfile {
  private static final int WARMUP = 100;
  private static final List<String> NAMES = List.of("local", "confinedDenyAll", "confinedRootless");

  private ConfinedProfile() {}

  public static void main(String[] args) throws Exception {
    int iterations = 1000;
    Path out = Path.of("target/bench/confined-profile.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path root = Files.createTempDirectory("confine-profile");
    Path writable = Files.createTempDirectory("confine-profile-writable");
    ExecOptions denyAll = ExecOptions.builder().net(NetPolicy.denyAll()).build();
    Runner[] runners = {
      LocalRunner.create(root.toString()),
      ConfinedRunner.builder(root.toString()).writablePaths(writable.toString()).build(),
      ConfinedRunner.builder(root.toString())
          .writablePaths(writable.toString())
          .rootless(true)
          .build()
    };
    ExecOptions[] options = {null, denyAll, denyAll};
    long[][] nanos = new long[runners.length][iterations];
    for (int i = -WARMUP; i < iterations; i++) {
      for (int j = 0; j < runners.length; j++) {
        int k = Math.floorMod(i + j, runners.length);
        long t0 = System.nanoTime();
        ExecResult r = runners[k].exec("/bin/true", List.of(), options[k]);
        long t = System.nanoTime() - t0;
        Checks.exitedZero(r.exitCode());
        if (i >= 0) {
          nanos[k][i] = t;
        }
      }
    }
    Files.delete(writable);
    Files.delete(root);

    StringBuilder json = new StringBuilder("{\"iterations\":").append(iterations);
    json.append(",\"mechanism\":\"")
        .append(
            ((ConfinedRunner) runners[1])
                .capabilities().stream()
                    .filter(c -> c.dimension() == Dimension.NET_DENY_ALL)
                    .map(
                        c ->
                            c.detail().startsWith("private network namespace")
                                ? "netns"
                                : "seccomp")
                    .findFirst()
                    .orElse("?"))
        .append("\",\"execs\":{");
    InterleavedTimes.summarize(json, NAMES, nanos, 17);
    json.append("}}");
    Files.writeString(out, json + "\n", StandardCharsets.UTF_8);
  }
}
