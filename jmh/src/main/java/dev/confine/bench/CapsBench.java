package dev.confine.bench;

import dev.confine.CapsMechanism;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.local.LocalRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Exec throughput with caps against without, {@code /bin/true} one at a time, all in one fork:
 *
 * <ul>
 *   <li>{@code uncapped}: a runner built with {@code caps(CGROUP_V1)}, called without limits (no
 *       cgroup is made: the baseline);
 *   <li>{@code cgroupV1}: the same runner with {@value #MEMORY_MIB} MiB of memory and {@value
 *       #MAX_PROCESSES} processes: a cgroup per exec (memory, pids, cpuacct and freezer
 *       directories, limits written, the placement thread moved in and out, usage read, removed);
 *   <li>{@code procSampler}: a runner with {@code caps(PROC_SAMPLER)} and the memory cap (the
 *       sampler watches the tree; no process cap there).
 * </ul>
 */
// Ten 2 s iterations in each of two forks: with three 3 s iterations in one fork the error on
// this 2-CPU VM was +-50-120 %, larger than the ratio it is meant to show.
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 10, time = 2)
@Fork(value = 2, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class CapsBench {
  static final int MEMORY_MIB = 256;
  static final int MAX_PROCESSES = 64;

  private Path root;
  private LocalRunner cgroupRunner;
  private LocalRunner samplerRunner;
  private ExecOptions capped;
  private ExecOptions memoryOnly;

  @Setup
  public void setUp() throws IOException {
    root = Files.createTempDirectory("confine-bench");
    cgroupRunner = LocalRunner.builder(root.toString()).caps(CapsMechanism.CGROUP_V1).build();
    samplerRunner = LocalRunner.builder(root.toString()).caps(CapsMechanism.PROC_SAMPLER).build();
    if (!cgroupRunner.enforcement().memoryCap() || !cgroupRunner.enforcement().pidsCap()) {
      throw new IllegalStateException("cgroup v1 memory and pids caps are not available here");
    }
    capped =
        ExecOptions.builder()
            .resources(
                ResourceLimits.builder()
                    .memoryBytes((long) MEMORY_MIB << 20)
                    .maxProcesses(MAX_PROCESSES)
                    .build())
            .build();
    memoryOnly =
        ExecOptions.builder()
            .resources(ResourceLimits.builder().memoryBytes((long) MEMORY_MIB << 20).build())
            .build();
  }

  @TearDown
  public void tearDown() throws IOException {
    Files.deleteIfExists(root);
  }

  /** The baseline: the cgroup runner without limits. */
  @Benchmark
  public int uncapped() {
    return run(cgroupRunner, null, false);
  }

  /** Memory and process caps in a v1 cgroup made and removed per exec. */
  @Benchmark
  public int cgroupV1() {
    return run(cgroupRunner, capped, true);
  }

  /** The memory cap through the /proc sampler. */
  @Benchmark
  public int procSampler() {
    return run(samplerRunner, memoryOnly, true);
  }

  private static int run(LocalRunner runner, ExecOptions options, boolean measured) {
    ExecResult r = runner.exec("/bin/true", List.of(), options);
    if (measured != (r.usage().peakMemoryBytes() >= 0)) {
      throw new IllegalStateException("usage " + r.usage() + " with caps " + measured);
    }
    return Checks.exitedZero(r.exitCode());
  }
}
