package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.linux.confinement.Landlock;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.SessionReads;
import dev.confine.testing.WorkDirFlipper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * As {@code WorkDirRaceTest}, for the confined runner, whose spawns run on a confinement thread:
 * the work dir opened by the caller stays the one the child starts in. Rootless forced, so that a
 * run as root tests the same path as a run as nobody.
 */
@Tag("confinement")
class ConfinedWorkDirRaceTest {
  @TempDir Path root;
  @TempDir Path outside;

  @Test
  void noConfinedExecStartsOutsideTheRootWhileTheTreeFlips() throws Exception {
    HostRequirements.require(Landlock.availability());
    ConfinedRunner runner = ConfinedRunner.builder(root.toString()).rootless(true).build();
    WorkDirFlipper.Tally tally;
    try (WorkDirFlipper flipper = new WorkDirFlipper(root, outside)) {
      tally =
          flipper.run(
              1000,
              wd ->
                  runner
                      .exec(
                          "pwd",
                          List.of("-P"),
                          ExecOptions.builder().workDir(wd).timeout(Duration.ofSeconds(30)).build())
                      .stdout());
    }
    assertThat(tally.escapes())
        .as("execs that ran outside the root, by work dir (%s)", tally)
        .isEmpty();
    assertThat(tally.ran()).isPositive();
  }

  @Test
  void noConfinedSessionStartsOutsideTheRootWhileTheTreeFlips() throws Exception {
    HostRequirements.require(Landlock.availability());
    ConfinedRunner runner = ConfinedRunner.builder(root.toString()).rootless(true).build();
    WorkDirFlipper.Tally tally;
    try (WorkDirFlipper flipper = new WorkDirFlipper(root, outside)) {
      tally =
          flipper.run(
              300,
              wd -> {
                try (ProcessSession s =
                    runner.start(
                        ProcessSpec.pipes(List.of("pwd", "-P"))
                            .withOptions(
                                ExecOptions.builder()
                                    .workDir(wd)
                                    .timeout(Duration.ofSeconds(30))
                                    .build()))) {
                  return SessionReads.readAll(s).getBytes(StandardCharsets.UTF_8);
                } catch (InterruptedException e) {
                  throw new AssertionError(e);
                }
              });
    }
    assertThat(tally.escapes()).as("sessions that ran outside the root (%s)", tally).isEmpty();
    assertThat(tally.ran()).isPositive();
  }
}
