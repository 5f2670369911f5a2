package dev.confine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code confine exec --stdin-file} streams its input into the child as the child runs, in a JVM
 * with a 64 MiB heap: an input that never ends (or ends far beyond the heap) neither runs the JVM
 * out of memory nor delays the child, and the timeout counts from the start.
 */
class StdinStreamTest {
  private static Map<String, String> lines;

  @BeforeAll
  static void runTheProbe(@TempDir Path root) throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Path log = Files.createTempFile("stdin-stream-probe", ".log");
    Process p =
        new ProcessBuilder(
                java,
                "-Xmx64m",
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                StdinStreamProbe.class.getName(),
                root.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    // Before the fix a silent stdin held the child back for ever: the probe hung.
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
    assertThat(lines).containsKeys(StdinStreamProbe.names().toArray(String[]::new));
  }

  private static long field(String scenario, String key) {
    for (String part : lines.get(scenario).split(" ")) {
      if (part.startsWith(key + "=")) {
        return Long.parseLong(part.substring(key.length() + 1));
      }
    }
    throw new AssertionError(key + " missing in " + lines.get(scenario));
  }

  @Test
  void anEndlessStdinDoesNotKeepAChildThatNeverReadsItFromEnding() {
    assertThat(field("endless-sleep", "status")).as(lines.get("endless-sleep")).isZero();
    assertThat(field("endless-sleep", "ms")).isLessThan(10_000);
  }

  @Test
  void devZeroIsStreamedNotReadWhole() {
    assertThat(field("devzero-head", "status")).as(lines.get("devzero-head")).isZero();
    assertThat(field("devzero-head", "out")).isEqualTo(1_000_000);
  }

  @Test
  void aStdinThatStaysOpenDoesNotDelayTheStartPastTheTimeout() {
    assertThat(field("silent-timeout", "status")).as(lines.get("silent-timeout")).isEqualTo(124);
    assertThat(field("silent-timeout", "ms")).isLessThan(10_000);
  }

  @Test
  void moreInputThanTheHeapHoldsFlowsThrough() {
    assertThat(field("endless-head", "status")).as(lines.get("endless-head")).isZero();
    // 100 MB through a 64 MiB heap; stdout is streamed, not held, so the default cap of 10 MiB
    // is written whole and the rest cut.
    assertThat(field("endless-head", "out")).isEqualTo(10L << 20);
    assertThat(lines.get("endless-head"))
        .endsWith("err=confine: stdout truncated at 10485760 bytes");
  }
}
