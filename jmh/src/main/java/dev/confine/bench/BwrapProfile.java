package dev.confine.bench;

import dev.confine.CapsMechanism;
import dev.confine.ExecOptions;
import dev.confine.NetPolicy;
import dev.confine.bwrap.BwrapRunner;
import dev.confine.local.LocalRunner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@link BwrapRunner} against the same bubblewrap command line run by {@link ProcessBuilder}, and
 * both against {@code /bin/true} through {@link LocalRunner} (what bwrap itself adds), interleaved
 * in one loop with the order rotating every iteration: {@code /bin/true} under {@code DENY_ALL} and
 * under {@code DEFAULT}, and under {@code DENY_ALL} with caps {@code NONE} (no cgroup, no tree
 * tracking: what those cost here). The command line is the runner's own, recorded once by a
 * stand-in binary that writes its arguments, so that both sides start bwrap with exactly the same
 * words.
 *
 * <p>Usage: {@code BwrapProfile [--iterations N] [--out bwrap-profile.json]}.
 */
public final class BwrapProfile {
  private static final int WARMUP = 30;
  private static final List<String> NAMES =
      List.of(
          "runnerDenyAll",
          "processBuilderDenyAll",
          "runnerDefault",
          "processBuilderDefault",
          "runnerDenyAllUntracked",
          "local");

  private BwrapProfile() {}

  public static void main(String[] args) throws Exception {
    int iterations = 300;
    Path out = Path.of("target/bench/bwrap-profile.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path root = Files.createTempDirectory("confine-bwrap-profile");
    ExecOptions denyAll = ExecOptions.builder().net(NetPolicy.denyAll()).build();
    ExecOptions plain = ExecOptions.builder().build();
    BwrapRunner runner = BwrapRunner.builder(root.toString()).build();
    List<String> denyAllLine = recorded(root, runner.binary(), denyAll);
    List<String> defaultLine = recorded(root, runner.binary(), plain);
    LocalRunner local = LocalRunner.create(root.toString());
    BwrapRunner untracked = BwrapRunner.builder(root.toString()).caps(CapsMechanism.NONE).build();

    long[][] nanos = new long[NAMES.size()][iterations];
    for (int i = -WARMUP; i < iterations; i++) {
      for (int j = 0; j < NAMES.size(); j++) {
        int k = Math.floorMod(i + j, NAMES.size());
        long t0 = System.nanoTime();
        int exit =
            switch (k) {
              case 0 -> runner.exec("/bin/true", List.of(), denyAll).exitCode();
              case 1 -> processBuilder(denyAllLine, root);
              case 2 -> runner.exec("/bin/true", List.of(), plain).exitCode();
              case 3 -> processBuilder(defaultLine, root);
              case 4 -> untracked.exec("/bin/true", List.of(), denyAll).exitCode();
              default -> local.exec("/bin/true", List.of(), plain).exitCode();
            };
        long t = System.nanoTime() - t0;
        Checks.exitedZero(exit);
        if (i >= 0) {
          nanos[k][i] = t;
        }
      }
    }
    StringBuilder json = new StringBuilder("{\"iterations\":").append(iterations);
    json.append(",\"execs\":{");
    double[] means = InterleavedTimes.summarize(json, NAMES, nanos, 22);
    json.append("}}");
    System.out.printf(
        Locale.ROOT,
        "DENY_ALL: runner / ProcessBuilder throughput %.2fx; DEFAULT %.2fx; bwrap adds %.1f ms"
            + " (DENY_ALL) and %.1f ms (DEFAULT) over a local exec; untracked (caps NONE) / "
            + "ProcessBuilder %.2fx%n",
        means[1] / means[0],
        means[3] / means[2],
        (means[0] - means[5]) / 1000.0,
        (means[2] - means[5]) / 1000.0,
        means[1] / means[4]);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, json + "\n", StandardCharsets.UTF_8);
    System.exit(0);
  }

  /** The command line {@code runner} starts bwrap with for {@code /bin/true} under {@code opts}. */
  private static List<String> recorded(Path root, Path bwrap, ExecOptions opts) throws Exception {
    Path dir = Files.createTempDirectory("confine-bwrap-recorder");
    Path argv = dir.resolve("argv");
    Path script = dir.resolve("bwrap");
    Files.writeString(
        script, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > " + argv + "\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
    BwrapRunner recorder = BwrapRunner.builder(root.toString()).binary(script.toString()).build();
    Checks.exitedZero(recorder.exec("/bin/true", List.of(), opts).exitCode());
    List<String> line = new ArrayList<>();
    line.add(bwrap.toString());
    String all = Files.readString(argv, StandardCharsets.UTF_8);
    for (String word : all.split("\0", -1)) {
      line.add(word);
    }
    line.remove(line.size() - 1); // after the last NUL
    return line;
  }

  private static int processBuilder(List<String> line, Path root) throws Exception {
    Process p = new ProcessBuilder(line).directory(root.toFile()).start();
    p.getOutputStream().close();
    p.getInputStream().readAllBytes();
    p.getErrorStream().readAllBytes();
    return p.waitFor();
  }
}
