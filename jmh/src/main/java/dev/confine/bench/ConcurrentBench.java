package dev.confine.bench;

import dev.confine.ExecResult;
import dev.confine.local.LocalRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * {@value #CONCURRENCY} execs at once, each from its own virtual thread; the score is execs per
 * second. Alongside it the platform threads are counted: Confine waits on one event-loop thread for
 * every child, while the JDK parks one "process reaper" platform thread in waitpid per live child.
 * {@code true} runs {@code /bin/true}; {@code sleep} runs {@code sh -c 'sleep 0.1'}, so that all
 * children are alive at the same time.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class ConcurrentBench {
  static final int CONCURRENCY = 200;

  @Param({"true", "sleep"})
  public String command;

  private Path root;
  private LocalRunner runner;
  private String program;
  private List<String> args;
  private final ThreadCounts threads = new ThreadCounts();
  private boolean snapshotPending;

  @Setup(Level.Trial)
  public void setUp(BenchmarkParams params) throws Exception {
    threads.cold();
    root = Files.createTempDirectory("confine-bench");
    runner = LocalRunner.create(root.toString());
    if (command.equals("true")) {
      program = "/bin/true";
      args = List.of();
    } else {
      program = "sh";
      args = List.of("-c", "sleep 0.1");
    }
    // One exec through the engine under test, from a virtual thread, so that "before" is the idle
    // count of a warm engine (Confine's event loop, the JDK's first reaper, a carrier thread).
    boolean local = params.getBenchmark().endsWith(".localRunner");
    try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
      ex.submit(() -> local ? runLocal() : runProcessBuilder()).get();
    }
    threads.before();
  }

  @Setup(Level.Iteration)
  public void armSnapshot() {
    snapshotPending = true;
  }

  @TearDown(Level.Trial)
  public void tearDown(BenchmarkParams params) throws IOException {
    String name = params.getBenchmark();
    threads.report(name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1), command);
    Files.deleteIfExists(root);
  }

  @Benchmark
  @OperationsPerInvocation(CONCURRENCY)
  public int localRunner() throws InterruptedException, ExecutionException {
    return batch(true);
  }

  @Benchmark
  @OperationsPerInvocation(CONCURRENCY)
  public int processBuilder() throws InterruptedException, ExecutionException {
    return batch(false);
  }

  private int batch(boolean local) throws InterruptedException, ExecutionException {
    int sum = 0;
    try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<Integer>> done = new ArrayList<>(CONCURRENCY);
      for (int i = 0; i < CONCURRENCY; i++) {
        done.add(ex.submit(() -> local ? runLocal() : runProcessBuilder()));
      }
      if (snapshotPending) {
        snapshotPending = false;
        threads.snapshot();
      }
      for (Future<Integer> f : done) {
        sum += f.get();
      }
    }
    return sum;
  }

  private int runLocal() {
    ExecResult r = runner.exec(program, args, null);
    return Checks.exitedZero(r.exitCode());
  }

  private int runProcessBuilder() throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(args.size() + 1);
    cmd.add(program);
    cmd.addAll(args);
    Process p = new ProcessBuilder(cmd).directory(root.toFile()).start();
    int code = p.waitFor();
    p.getOutputStream().close();
    p.getInputStream().close();
    p.getErrorStream().close();
    return Checks.exitedZero(code);
  }
}
