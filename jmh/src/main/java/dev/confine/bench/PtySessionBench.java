package dev.confine.bench;

import com.pty4j.PtyProcess;
import dev.confine.local.LocalRunner;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * 256 MiB through a PTY session: {@code cat FILE} on a 24x80 pty, FILE being 256 MiB of 'a' (no
 * newline, which the terminal would turn into CR LF) written once per trial. Confine's session is
 * read until end of file into a 64 KiB buffer as in {@link PipeSessionBench} (64 MiB log, a gap
 * fails the benchmark); the baseline is JetBrains' pty4j, its input stream read to end of file into
 * a 64 KiB buffer. Both byte counts are checked. One op per MiB: the scores are MiB/s. The fork's
 * heap is fixed and pre-touched, as in {@link PipeSessionBench} (see {@link Sessions}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 4)
@Fork(
    value = 1,
    jvmArgsAppend = {
      "--enable-native-access=ALL-UNNAMED",
      "-Xms2g",
      "-Xmx2g",
      "-XX:+AlwaysPreTouch"
    })
public class PtySessionBench {
  private Path root;
  private Path file;
  private LocalRunner runner;

  @Setup
  public void setUp() throws IOException {
    root = Files.createTempDirectory("confine-bench");
    file = root.resolve("a.bin");
    byte[] mib = new byte[(int) Sessions.MIB];
    Arrays.fill(mib, (byte) 'a');
    try (OutputStream out = Files.newOutputStream(file)) {
      for (int i = 0; i < Sessions.MIBS; i++) {
        out.write(mib);
      }
    }
    runner = LocalRunner.create(root.toString());
  }

  @TearDown
  public void tearDown() throws IOException {
    Files.deleteIfExists(file);
    Files.deleteIfExists(root);
  }

  @Benchmark
  @OperationsPerInvocation(Sessions.MIBS)
  public long localRunner() throws InterruptedException {
    ProcessSpec spec =
        ProcessSpec.terminal(List.of("cat", file.toString()))
            .withOptions(Sessions.THROUGHPUT_OPTIONS);
    try (ProcessSession s = runner.start(spec)) {
      long n = Sessions.drain(s);
      Checks.exitedZero(s.waitFor().code());
      return Sessions.checkLength(n, Sessions.SIZE);
    }
  }

  @Benchmark
  @OperationsPerInvocation(Sessions.MIBS)
  public long pty4j() throws IOException, InterruptedException {
    PtyProcess p = Sessions.startPty4j(root, "cat", file.toString());
    long n;
    try (InputStream in = p.getInputStream()) {
      n = Sessions.drain(in);
    }
    Checks.exitedZero(Sessions.finish(p));
    return Sessions.checkLength(n, Sessions.SIZE);
  }
}
