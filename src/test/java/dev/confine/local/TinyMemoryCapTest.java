package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.CapsMechanism;
import dev.confine.ResourceLimits;
import dev.confine.testing.HostRequirements;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15 finding 6: {@code --memory 4k -- true} aborted the JVM ("insufficient memory for the
 * Java Runtime Environment") because the spawning thread sat in the child's memory cgroup. In a JVM
 * of its own ({@link TinyMemoryCapMain}): caps at and just above the minimum start every program,
 * and caps far below it, on the engine, leave the JVM alive.
 */
@Timeout(300)
class TinyMemoryCapTest {
  private static final int RUNS = 40;

  @TempDir Path tmp;

  @Test
  void theJvmSurvivesTinyCapsAndProgramsStartAtTheMinimum() throws Exception {
    LocalRunner probe = LocalRunner.builder(tmp.toString()).caps(CapsMechanism.CGROUP_V1).build();
    HostRequirements.require(
        probe.enforcement().memoryCap(), "no v1 memory cgroup here: " + probe.capabilities());
    Path log = tmp.resolve("out.txt");
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                TinyMemoryCapMain.class.getName(),
                Integer.toString(RUNS))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    boolean ended = p.waitFor(240, TimeUnit.SECONDS);
    if (!ended) {
      p.destroyForcibly();
    }
    String out = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(ended).as("the JVM hung: %s", out).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    long min = ResourceLimits.MIN_MEMORY_BYTES;
    assertThat(out)
        .contains("library cap=" + min + " true ok=" + RUNS)
        .contains("library cap=" + min + " sh -c true ok=" + RUNS)
        .contains("library cap=" + (min + 4096) + " true ok=" + RUNS)
        .contains("library cap=" + (min + 4096) + " sh -c true ok=" + RUNS)
        .contains("library refused 4096: VALIDATION")
        .contains("engine cap=4096 ended=" + RUNS)
        .contains("engine cap=1 ended=" + RUNS)
        .contains("survived")
        .doesNotContain("insufficient memory");
  }
}
