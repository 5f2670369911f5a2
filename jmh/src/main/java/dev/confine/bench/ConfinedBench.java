package dev.confine.bench;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.confined.ConfinedRunner;
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
 * Exec throughput under confinement against without, {@code /bin/true} one at a time, all in one
 * fork:
 *
 * <ul>
 *   <li>{@code local}: {@link LocalRunner} (the baseline);
 *   <li>{@code confinedDenyAll}: {@link ConfinedRunner} with a writable path and {@code DENY_ALL},
 *       by whatever this host offers (as root a private network namespace, else seccomp): the
 *       hand-off to the confinement thread, the per-exec TMPDIR made and removed;
 *   <li>{@code confinedRootless}: the same with {@code rootless(true)} (Landlock + seccomp).
 * </ul>
 *
 * <p>The confinement threads are created (and confined) in the warm-up; what is measured is the
 * steady state.
 */
// Ten 2 s iterations in each of two forks: with three 3 s iterations in one fork the error on
// this 2-CPU VM was +-50-120 %, larger than the ratio it is meant to show.
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 10, time = 2)
@Fork(value = 2, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class ConfinedBench {
  private Path root;
  private Path writable;
  private LocalRunner local;
  private ConfinedRunner confined;
  private ConfinedRunner rootless;
  private ExecOptions denyAll;

  @Setup
  public void setUp() throws IOException {
    root = Files.createTempDirectory("confine-bench");
    writable = Files.createTempDirectory("confine-bench-writable");
    local = LocalRunner.create(root.toString());
    confined = ConfinedRunner.builder(root.toString()).writablePaths(writable.toString()).build();
    rootless =
        ConfinedRunner.builder(root.toString())
            .writablePaths(writable.toString())
            .rootless(true)
            .build();
    denyAll = ExecOptions.builder().net(NetPolicy.denyAll()).build();
    if (!confined.enforcement().filesystemBounds()
        || !confined.enforcement().enforces(denyAll.net().mode())) {
      throw new IllegalStateException("Landlock and DENY_ALL are not both available here");
    }
    for (ConfinedRunner r : List.of(confined, rootless)) {
      System.out.println(r + ": net deny_all by " + denyAllMechanism(r));
    }
  }

  private static String denyAllMechanism(ConfinedRunner r) {
    return r.capabilities().stream()
        .filter(c -> c.dimension() == Dimension.NET_DENY_ALL)
        .map(Capability::detail)
        .findFirst()
        .orElse("?");
  }

  @TearDown
  public void tearDown() throws IOException {
    Files.deleteIfExists(writable);
    Files.deleteIfExists(root);
  }

  /** The baseline: LocalRunner, no confinement. */
  @Benchmark
  public int local() {
    ExecResult r = local.exec("/bin/true", List.of(), null);
    return Checks.exitedZero(r.exitCode());
  }

  /** Write bounds and DENY_ALL the way this host does it (namespace as root). */
  @Benchmark
  public int confinedDenyAll() {
    ExecResult r = confined.exec("/bin/true", List.of(), denyAll);
    return Checks.exitedZero(r.exitCode());
  }

  /** Write bounds and DENY_ALL by Landlock + seccomp only. */
  @Benchmark
  public int confinedRootless() {
    ExecResult r = rootless.exec("/bin/true", List.of(), denyAll);
    return Checks.exitedZero(r.exitCode());
  }
}
