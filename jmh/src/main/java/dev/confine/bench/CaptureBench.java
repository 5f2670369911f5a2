package dev.confine.bench;

import dev.confine.ExecResult;
import dev.confine.local.LocalRunner;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
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
 * Run {@code head -c 1048576 /dev/zero} and capture its 1 MiB of stdout (and its empty stderr).
 * Confine reads both pipes on its event loop. The ProcessBuilder version is what a competent user
 * writes: stdout read fully on the calling thread, stderr on a second (virtual) thread so that
 * neither pipe can fill up and stall the child, then waitFor.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class CaptureBench {
  static final int SIZE = 1 << 20;
  private static final List<String> ARGS = List.of("-c", Integer.toString(SIZE), "/dev/zero");

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

  @Benchmark
  public int localRunner() {
    ExecResult r = runner.exec("head", ARGS, null);
    Checks.exitedZero(r.exitCode());
    // stdoutLength, not stdout(): the accessor hands out a defensive copy the user may not need.
    return Checks.length(r.stdoutLength(), SIZE);
  }

  @Benchmark
  public int processBuilder() throws IOException, InterruptedException, ExecutionException {
    Process p =
        new ProcessBuilder("head", ARGS.get(0), ARGS.get(1), ARGS.get(2))
            .directory(root.toFile())
            .start();
    p.getOutputStream().close();
    FutureTask<byte[]> stderr = new FutureTask<>(() -> readAll(p.getErrorStream()));
    Thread.ofVirtual().start(stderr);
    byte[] out;
    try (InputStream in = p.getInputStream()) {
      out = in.readAllBytes();
    }
    byte[] err = stderr.get();
    Checks.exitedZero(p.waitFor());
    Checks.length(err.length, 0);
    return Checks.length(out.length, SIZE);
  }

  private static byte[] readAll(InputStream in) {
    try (in) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
