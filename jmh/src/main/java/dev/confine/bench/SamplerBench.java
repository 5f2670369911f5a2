package dev.confine.bench;

import dev.confine.linux.child.Execution;
import dev.confine.linux.proc.ProcSampler;
import dev.confine.linux.spawn.SpawnSpec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
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
 * One sample of a 50-process tree (a shell and 50 {@code sleep}s in one session): Confine's /proc
 * sampler (open/read/close of each member's stat and children files through FFM, plus a /proc scan
 * of the session every 20th sample) against what the seed effectively runs at every tick, {@code ps
 * -o rss=,time= -s SID}, started with ProcessBuilder and read to the end.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class SamplerBench {
  private static final int SLEEPS = 50;

  private Execution tree;
  private ProcSampler sampler;
  private String sid;

  @Setup
  public void setUp() throws IOException, InterruptedException {
    tree =
        Execution.startWatched(
            new SpawnSpec(
                "/bin/sh",
                List.of("sh", "-c", "for i in $(seq " + SLEEPS + "); do sleep 3600 & done; wait"),
                List.of("PATH=/usr/bin:/bin"),
                "/",
                false),
            null,
            1 << 16);
    sid = Integer.toString(tree.pid());
    sampler = new ProcSampler(tree.pid());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (sampler.sample().members() != SLEEPS + 1) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("the tree never reached " + (SLEEPS + 1) + " processes");
      }
      TimeUnit.MILLISECONDS.sleep(10);
    }
    long lines = ps().chars().filter(c -> c == '\n').count();
    if (lines != SLEEPS + 1) {
      throw new IllegalStateException("ps saw " + lines + " processes, expected " + (SLEEPS + 1));
    }
  }

  @TearDown
  public void tearDown() {
    tree.killGroup();
    tree.awaitExitUninterruptibly(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
    tree.closeStreams();
  }

  /** Confine: refresh the membership and sum RSS and CPU time from /proc. */
  @Benchmark
  public ProcSampler.Sample procSampler() throws IOException {
    ProcSampler.Sample s = sampler.sample();
    if (s.members() != SLEEPS + 1) {
      throw new IllegalStateException("sampled " + s.members() + " processes");
    }
    return s;
  }

  /** The seed: one ps process per sample, its output read to the end. */
  @Benchmark
  public String ps() throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder("ps", "-o", "rss=,time=", "-s", sid).redirectErrorStream(true).start();
    String out;
    try (InputStream in = p.getInputStream()) {
      out = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
    }
    p.getOutputStream().close();
    if (p.waitFor() != 0) {
      throw new IllegalStateException("ps failed: " + out);
    }
    return out;
  }
}
