package dev.confine.bench;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.ExecResult;
import dev.confine.host.HostExec;
import dev.confine.linux.Engine;
import dev.confine.linux.cgroup.CgroupGuard;
import dev.confine.linux.cgroup.Cgroups;
import dev.confine.linux.child.ChildOutcome;
import dev.confine.linux.child.Execution;
import dev.confine.linux.proc.SamplerGuard;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.linux.tree.TreeLimits;
import dev.confine.local.LocalRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The default exec against the JDK, interleaved in one loop so that the machine's load hits them
 * alike: per iteration {@code /bin/true} through {@link LocalRunner#exec} with no options (every
 * tree tracked: on a v1 host a pooled freezer cgroup, else what the "tree kill" row says), through
 * {@link ProcessBuilder} (as {@link SpawnBench#processBuilder}), and through the engine alone
 * ({@link Execution}) under the guard the default exec uses (a tree cgroup without caps where one
 * can be made, else the sampler's tracking) and under no guard at all ({@link TreeGuard#NONE}, the
 * process group alone: what the default exec tracked before), in an order that rotates every
 * iteration. Reports mean and median wall time per exec of each and the throughput ratios: default
 * / ProcessBuilder (target 1.8x) and untracked / engineTracked (what the tracking costs).
 *
 * <p>Usage: {@code DefaultExecProfile [--iterations N] [--out default-profile.json]}.
 */
public final class DefaultExecProfile {
  private static final int WARMUP = 200;
  private static final List<String> NAMES =
      List.of("default", "processBuilder", "engineTracked", "untracked");

  private DefaultExecProfile() {}

  public static void main(String[] args) throws Exception {
    int iterations = 2000;
    Path out = Path.of("target/bench/default-profile.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path root = Files.createTempDirectory("confine-profile");
    LocalRunner runner = LocalRunner.create(root.toString());
    String tracking =
        runner.capabilities().stream()
            .filter(c -> c.dimension() == Dimension.TREE_KILL)
            .map(Capability::detail)
            .findFirst()
            .orElse("?");
    SpawnSpec spec =
        new SpawnSpec(
            "/bin/true",
            List.of("/bin/true"),
            List.of("PATH=/usr/bin:/bin"),
            root.toString(),
            false);
    Cgroups cgroups = Cgroups.probe(Cgroups.Version.AUTO, null).cgroups();
    long[][] nanos = new long[NAMES.size()][iterations];
    for (int i = -WARMUP; i < iterations; i++) {
      for (int j = 0; j < NAMES.size(); j++) {
        int k = Math.floorMod(i + j, NAMES.size());
        long t0 = System.nanoTime();
        switch (k) {
          case 0 -> {
            ExecResult r = runner.exec("/bin/true", List.of(), null);
            Checks.exitedZero(r.exitCode());
          }
          case 1 -> processBuilder(root);
          case 2 ->
              run(
                  spec,
                  cgroups != null
                      ? new CgroupGuard(cgroups, TreeLimits.NONE)
                      : new SamplerGuard(0, 0));
          default -> run(spec, TreeGuard.NONE);
        }
        long t = System.nanoTime() - t0;
        if (i >= 0) {
          nanos[k][i] = t;
        }
      }
    }
    Files.delete(root);

    StringBuilder json = new StringBuilder("{\"iterations\":").append(iterations);
    json.append(",\"tracking\":\"").append(tracking.replace("\"", "'")).append("\",\"execs\":{");
    double[] means = InterleavedTimes.summarize(json, NAMES, nanos, 15);
    json.append("}}");
    System.out.printf(
        Locale.ROOT,
        "default / ProcessBuilder %.2fx, untracked / engineTracked %.2fx (tracking: %s)%n",
        means[1] / means[0],
        means[3] / means[2],
        tracking);
    Files.writeString(out, json + "\n", StandardCharsets.UTF_8);
  }

  private static void processBuilder(Path root) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("/bin/true").directory(root.toFile()).start();
    int code = p.waitFor();
    p.getOutputStream().close();
    p.getInputStream().close();
    p.getErrorStream().close();
    Checks.exitedZero(code);
  }

  private static void run(SpawnSpec spec, TreeGuard guard) {
    ChildOutcome c =
        Execution.start(spec, null, HostExec.DEFAULT_MAX_OUTPUT_BYTES, guard)
            .runToCompletion(Long.MAX_VALUE, Engine.DRAIN.toNanos());
    if (c.exit() == null || c.exit().signaled() || c.exit().code() != 0) {
      throw new IllegalStateException("/bin/true did not exit 0: " + c);
    }
  }
}
