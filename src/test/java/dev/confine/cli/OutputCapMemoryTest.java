package dev.confine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Output capture in a JVM with a 64 MiB heap (a capture limit of 8 MiB per stream): captures at the
 * limit fit, an unlimited runner keeps the limit and says it truncated, JSON output of the worst
 * kind streams, a cap beyond the limit is refused in one line, and concurrent execs that together
 * exceed the heap each end cleanly. No OutOfMemoryError anywhere.
 */
class OutputCapMemoryTest {
  private static final long HEAP = 64L << 20;
  private static final long LIMIT = HEAP / 8;
  private static Map<String, String> lines;

  @BeforeAll
  static void runTheProbe(@TempDir Path root) throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Path log = Files.createTempFile("output-cap-probe", ".log");
    Process p =
        new ProcessBuilder(
                java,
                "-Xmx" + (HEAP >> 20) + "m",
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                OutputCapProbe.class.getName(),
                root.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    // A probe whose engine broke (before the fix, an OutOfMemoryError on the event loop) hangs.
    boolean ended = p.waitFor(120, TimeUnit.SECONDS);
    if (!ended) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly().waitFor();
    }
    String out = Files.readString(log, StandardCharsets.UTF_8);
    Files.delete(log);
    assertThat(ended).as("the probe ended within 120 s; its output: " + out).isTrue();
    lines = new LinkedHashMap<>();
    for (String line : out.lines().toList()) {
      int sp = line.indexOf(' ');
      lines.put(sp < 0 ? line : line.substring(0, sp), sp < 0 ? "" : line.substring(sp + 1));
    }
    assertThat(out).as(out).doesNotContain("OutOfMemoryError").doesNotContain("ERROR");
  }

  @Test
  void theProbeSawTheHeapItWasGiven() {
    assertThat(lines)
        .containsKeys(
            "unlimited", "both", "json", "refused", "streamed-big", "concurrent", "default");
  }

  @Test
  void anUnlimitedRunnerKeepsWhatTheJvmCanCaptureAndSaysItTruncated() {
    assertThat(lines.get("unlimited")).isEqualTo("kept=" + LIMIT + " truncated=true");
  }

  @Test
  void bothStreamsAtTheLimitFit() {
    assertThat(lines.get("both")).isEqualTo("kept=" + LIMIT + "," + LIMIT);
  }

  @Test
  void jsonOfTheWorstOutputAtTheLimitIsStreamed() {
    assertThat(lines.get("json"))
        .startsWith("status=0 bytes=")
        .contains(" head={\"exit_code\":0,\"signal\":null,\"stdout\":\"\\u0000\\u0000")
        .endsWith(" err=");
    long bytes = Long.parseLong(lines.get("json").split(" ")[1].substring("bytes=".length()));
    assertThat(bytes).isGreaterThan(6 * LIMIT);
  }

  @Test
  void aCapBeyondTheLimitIsRefusedWhenTheOutputIsCaptured() {
    assertThat(lines.get("refused"))
        .startsWith("status=0 out={")
        .contains("sandbox: exec true: maxOutputBytes 8589934592")
        .contains("at most " + LIMIT + " bytes");
  }

  @Test
  void streamedOutputNeedsNoHeapSoTheSameCapRuns() {
    assertThat(lines.get("streamed-big")).isEqualTo("status=0 err=");
  }

  @Test
  void theBuiltInDefaultIsWrittenWholeWhenStreamedWhateverTheHeap() {
    assertThat(lines.get("default"))
        .isEqualTo(
            "status=0 bytes="
                + (10 << 20)
                + " err=confine: stdout truncated at "
                + (10 << 20)
                + " bytes");
  }

  @Test
  void concurrentExecsBeyondTheHeapEachEndCleanly() {
    String outcomes = lines.get("concurrent");
    assertThat(outcomes).startsWith("outcomes=[");
    List<String> each =
        List.of(outcomes.substring("outcomes=[".length(), outcomes.length() - 1).split(", "));
    assertThat(each).hasSize(8).allMatch(o -> o.equals("ok") || o.equals("NOT_AVAILABLE"));
  }
}
