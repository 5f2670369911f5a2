package dev.confine.bench;

import com.pty4j.PtyProcess;
import dev.confine.local.LocalRunner;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * First-byte latency of a PTY session: from the call that starts {@code printf x} on a 24x80 pty to
 * the moment the reader holds the 'x'. Confine: {@code runner.start} then {@code session.read(0,
 * 1)}; pty4j: {@code PtyProcessBuilder.start()} then one {@code read()} of its input stream.
 * Sampled per call (JMH SampleTime: mean and percentiles). Reaping the child and releasing the pty
 * happen after each call, outside the measured time (a per-invocation tear-down, which costs
 * nothing here: one call takes milliseconds).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class PtyFirstByteBench {
  private static final List<String> ARGV = List.of("sh", "-c", "printf x; exec sleep 60");

  private Path root;
  private LocalRunner runner;
  private ProcessSession session;
  private PtyProcess pty;

  @Setup
  public void setUp() throws IOException {
    root = Files.createTempDirectory("confine-bench");
    runner = LocalRunner.create(root.toString());
  }

  @TearDown
  public void tearDown() throws IOException {
    Files.deleteIfExists(root);
  }

  @TearDown(Level.Invocation)
  public void release() throws InterruptedException, IOException {
    if (session != null) {
      session.close(); // kills the tree and waits until it is reaped
      session = null;
    }
    if (pty != null) {
      pty.destroyForcibly();
      Sessions.finish(pty);
      pty = null;
    }
  }

  @Benchmark
  public int localRunner() throws InterruptedException {
    session = runner.start(ProcessSpec.terminal(ARGV));
    ProcessOutput out = session.read(0, 1);
    return firstByte(out.chunks().isEmpty() ? -1 : out.chunks().get(0).buffer().get(0));
  }

  @Benchmark
  public int pty4j() throws IOException {
    pty = Sessions.startPty4j(root, ARGV.toArray(String[]::new));
    return firstByte(pty.getInputStream().read());
  }

  private static int firstByte(int b) {
    if (b != 'x') {
      throw new IllegalStateException("the first byte was " + b + ", not 'x'");
    }
    return b;
  }
}
