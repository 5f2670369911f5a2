package dev.confine.bench;

import dev.confine.local.LocalRunner;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * 256 MiB through a pipe session: {@code head -c 268435456 /dev/zero} started with {@link
 * LocalRunner#start}, its output read until end of file into a 64 KiB buffer ({@code
 * session.read(seq, buffer)}) with a 64 MiB output log; a reader that falls more than that behind
 * gets a gap and the benchmark fails. The baseline is the same child under {@link ProcessBuilder}
 * with stderr merged into stdout (the session's log also holds both), read to end of file into a 64
 * KiB buffer. {@link #localRunnerChunks} reads the session as chunks instead. One op per MiB: the
 * scores are MiB/s. The fork's heap is fixed and pre-touched (see {@link Sessions}).
 *
 * <p>JMH runs one benchmark's forks after the other's, so on a machine whose speed drifts over
 * minutes (a shared VM) the two scores can come from different weather: the same run has given
 * 0.85x here and 1.04x interleaved. {@link #interleaved} therefore also runs both, alternately in
 * one op (the order swapped every op), and counts each side's nanoseconds in {@link PairTimes}
 * (secondary results {@code sessionNanos} and {@code processBuilderNanos}, which JMH sums over the
 * measured iterations); the same bytes went through each, so their inverse ratio is the throughput
 * ratio. Its primary score (both sides' MiB per second together) means nothing on its own.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 6, time = 4)
@Fork(
    value = 2,
    jvmArgsAppend = {
      "--enable-native-access=ALL-UNNAMED",
      "-Xms2g",
      "-Xmx2g",
      "-XX:+AlwaysPreTouch"
    })
public class PipeSessionBench {
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
  @OperationsPerInvocation(Sessions.MIBS)
  public long localRunner() throws InterruptedException {
    return throughSession(false);
  }

  /**
   * As {@link #localRunner}, reading chunks ({@code read(seq, 1 MiB)}) instead of into a buffer:
   * each read returns the bytes in new arrays, 256 MiB of new heap per invocation.
   */
  @Benchmark
  @OperationsPerInvocation(Sessions.MIBS)
  public long localRunnerChunks() throws InterruptedException {
    return throughSession(true);
  }

  private long throughSession(boolean chunks) throws InterruptedException {
    try (ProcessSession s =
        runner.start(
            ProcessSpec.pipes(Sessions.ZEROS_ARGV).withOptions(Sessions.THROUGHPUT_OPTIONS))) {
      long n = chunks ? Sessions.drainChunks(s) : Sessions.drain(s);
      Checks.exitedZero(s.waitFor().code());
      return Sessions.checkLength(n, Sessions.SIZE);
    }
  }

  /** Each side's time in {@link #interleaved}, in nanoseconds. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class PairTimes {
    public long sessionNanos;
    public long processBuilderNanos;
    private boolean builderFirst;

    @Setup(Level.Iteration)
    public void reset() {
      sessionNanos = 0;
      processBuilderNanos = 0;
    }
  }

  @Benchmark
  @OperationsPerInvocation(2 * Sessions.MIBS)
  public long interleaved(PairTimes times) throws IOException, InterruptedException {
    boolean builderFirst = times.builderFirst;
    times.builderFirst = !builderFirst;
    long n = 0;
    for (int side = 0; side < 2; side++) {
      boolean builder = builderFirst == (side == 0);
      long t0 = System.nanoTime();
      n += builder ? processBuilder() : localRunner();
      long t = System.nanoTime() - t0;
      if (builder) {
        times.processBuilderNanos += t;
      } else {
        times.sessionNanos += t;
      }
    }
    return n;
  }

  @Benchmark
  @OperationsPerInvocation(Sessions.MIBS)
  public long processBuilder() throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(Sessions.ZEROS_ARGV)
            .directory(root.toFile())
            .redirectErrorStream(true)
            .start();
    p.getOutputStream().close();
    long n;
    try (InputStream in = p.getInputStream()) {
      n = Sessions.drain(in);
    }
    Checks.exitedZero(p.waitFor());
    return Sessions.checkLength(n, Sessions.SIZE);
  }
}
