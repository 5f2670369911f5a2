package dev.confine.local;

import static dev.confine.testing.SessionReads.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ExecOptions;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.PathTraversalException;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.host.HostExec;
import dev.confine.host.WorkDir;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import dev.confine.testing.WorkDirFlipper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The working directory is checked and then entered as one step: while a thread inside the root
 * keeps flipping symlinks and swapping directories for symlinks to outside, no exec and no session
 * starts outside the root. Each either starts inside or is refused.
 */
class WorkDirRaceTest {
  @TempDir Path root;
  @TempDir Path outside;

  private static ExecOptions in(String workDir) {
    return ExecOptions.builder().workDir(workDir).timeout(Duration.ofSeconds(30)).build();
  }

  @Test
  void aDirectorySwappedForALinkOutAfterTheCheckIsRefusedAsTheCheckWouldRefuseIt()
      throws Exception {
    Path real = root.toRealPath();
    Files.createDirectories(real.resolve("mid/sub"));
    Files.createDirectories(outside.resolve("sub"));
    for (String wd : List.of("mid", "mid/sub", real.resolve("mid/sub").toString())) {
      ExecOptions opts = in(wd);
      ExecRequest request = ExecRequest.of("pwd", List.of("-P"), opts);
      WorkDir checked = WorkDir.check(real, "pwd", opts.workDir());
      Files.move(real.resolve("mid"), real.resolve("mid.moved"));
      Files.createSymbolicLink(real.resolve("mid"), outside.toRealPath());
      try {
        assertThatThrownBy(
                () ->
                    HostExec.run(
                        request, checked, List.of(), 1 << 20, TreeGuard.NONE, Long.MAX_VALUE))
            .as(wd)
            .isInstanceOf(PathTraversalException.class)
            .hasMessageContaining(wd);
      } finally {
        Files.delete(real.resolve("mid"));
        Files.move(real.resolve("mid.moved"), real.resolve("mid"));
      }
    }
  }

  @Test
  void aRootMovedAndReplacedByALinkAfterTheRunnerWasBuiltIsRefused() throws Exception {
    Path real = root.toRealPath();
    Path ws = Files.createDirectories(real.resolve("ws"));
    LocalRunner runner = LocalRunner.create(ws.toString());
    Files.move(ws, real.resolve("ws.moved"));
    Files.createSymbolicLink(ws, outside.toRealPath());
    assertThatThrownBy(() -> runner.exec("pwd", List.of("-P"), in("")))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.FORBIDDEN))
        .hasMessageContaining("moved or replaced");
  }

  @Test
  void theWorkDirFdDoesNotReachTheChild() throws Exception {
    Path real = root.toRealPath();
    Files.createDirectories(real.resolve("wd"));
    ExecResult r =
        LocalRunner.create(real.toString())
            .exec(
                "sh",
                List.of("-c", "for f in /proc/$$/fd/*; do echo \"$f $(readlink $f)\"; done"),
                in("wd"));
    assertThat(r.stdoutText()).contains("/fd/0 ");
    assertThat(r.stdoutText().lines()).noneMatch(l -> l.contains(" " + real));
  }

  @Test
  void noExecStartsOutsideTheRootWhileTheTreeFlips() throws Exception {
    LocalRunner runner = LocalRunner.create(root.toString());
    WorkDirFlipper.Tally tally;
    try (WorkDirFlipper flipper = new WorkDirFlipper(root, outside)) {
      tally = flipper.run(1500, wd -> runner.exec("pwd", List.of("-P"), in(wd)).stdout());
      assertThat(flipper.flips()).isPositive();
    }
    assertThat(tally.escapes())
        .as("execs that ran outside the root, by work dir (%s)", tally)
        .isEmpty();
    assertThat(tally.ran()).isPositive();
  }

  @Test
  void noSessionStartsOutsideTheRootWhileTheTreeFlips() throws Exception {
    LocalRunner runner = LocalRunner.create(root.toString());
    WorkDirFlipper.Tally tally;
    try (WorkDirFlipper flipper = new WorkDirFlipper(root, outside)) {
      tally =
          flipper.run(
              300,
              wd -> {
                try (ProcessSession s =
                    runner.start(ProcessSpec.pipes(List.of("pwd", "-P")).withOptions(in(wd)))) {
                  return readAll(s).getBytes(StandardCharsets.UTF_8);
                } catch (InterruptedException e) {
                  throw new AssertionError(e);
                }
              });
    }
    assertThat(tally.escapes())
        .as("sessions that ran outside the root, by work dir (%s)", tally)
        .isEmpty();
    assertThat(tally.ran()).isPositive();
  }
}
