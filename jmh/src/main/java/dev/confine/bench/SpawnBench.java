package dev.confine.bench;

import dev.confine.ExecResult;
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
 * Spawn and reap {@code /bin/true}, one at a time: Confine's posix_spawn engine against the JDK's
 * ProcessBuilder with its default launch mechanism (posix_spawn of jspawnhelper, which then execs
 * the target). Both create pipes for the three standard streams; neither reads anything here.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 2) // the engine's JIT warm-up takes ~8 s here
@Measurement(iterations = 5, time = 3)
@Fork(value = 2, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class SpawnBench {
  private Path root;
  private LocalRunner runner;

  @Setup
  public void setUp() throws IOException {
    root = Files.createTempDirectory("confine-bench");
    runner = LocalRunner.create(root.toString());
  }

  @TearDown
  public void tearDown() throws IOException {
    Files.deleteIfExists(root);
  }

  /** Confine: spawn, watch the pidfd and both output pipes on the event loop, reap. */
  @Benchmark
  public int localRunner() {
    ExecResult r = runner.exec("/bin/true", List.of(), null);
    return Checks.exitedZero(r.exitCode());
  }

  /** The JDK: start, wait, close the three pipe streams the process holds. */
  @Benchmark
  public int processBuilder() throws IOException, InterruptedException {
    Process p = new ProcessBuilder("/bin/true").directory(root.toFile()).start();
    int code = p.waitFor();
    p.getOutputStream().close();
    p.getInputStream().close();
    p.getErrorStream().close();
    return Checks.exitedZero(code);
  }
}
