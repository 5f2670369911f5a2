package dev.confine.confined;

import static dev.confine.testing.SessionReads.readUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.confinement.Landlock;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code runAs(uid, gid)}: the children run as another user while the JVM stays root (without root
 * it is NOT_AVAILABLE: ConfinedUnprivilegedTest).
 */
@Tag("confinement")
class ConfinedRunAsTest {
  private static final int NOBODY = ConfinedModes.NOBODY;
  private static final ExecOptions OPTIONS =
      ExecOptions.builder().timeout(Duration.ofSeconds(30)).build();

  @TempDir Path root;

  @BeforeEach
  void needsLandlock() throws IOException {
    HostRequirements.require(Landlock.availability());
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxrwxrwx"));
  }

  private ConfinedRunner asNobody() {
    return ConfinedRunner.builder(root.toString()).runAs(NOBODY, NOBODY).build();
  }

  @Test
  @Tag("root")
  void childrenRunAsTheUserWhileTheJvmStaysRoot() throws IOException {
    ExecResult r =
        asNobody()
            .exec(
                "sh",
                List.of(
                    "-c",
                    "id -u; id -g; id -G; echo x > \"$TMPDIR/t\" && stat -c %u \"$TMPDIR\" &&"
                        + " echo mine > inside && stat -c %u inside"),
                OPTIONS);
    assertThat(r.exitCode()).as(r.stderrText()).isZero();
    String n = String.valueOf(NOBODY);
    assertThat(r.stdoutText().lines().toList()).containsExactly(n, n, n, n, n);
    assertThat(root.resolve("inside")).hasContent("mine");
    assertThat(Files.getAttribute(Path.of("/proc/self"), "unix:uid")).isEqualTo(0);
    // Only the confinement threads (which spawn the children) switched.
    for (Path task : Files.list(Path.of("/proc/self/task")).toList()) {
      String comm = Files.readString(task.resolve("comm")).strip();
      List<String> status = Files.readAllLines(task.resolve("status"));
      if (comm.startsWith("confine-confine")) {
        assertThat(status).as(comm).contains("Uid:\t" + n + "\t" + n + "\t" + n + "\t" + n);
      } else {
        assertThat(status).as(comm).contains("Uid:\t0\t0\t0\t0");
      }
    }
  }

  @Test
  @Tag("root")
  void theUsersOwnPermissionsApply() throws IOException {
    Path mine = Files.writeString(root.resolve("root-only"), "secret");
    Files.setPosixFilePermissions(mine, PosixFilePermissions.fromString("rw-------"));
    ExecResult r = asNobody().exec("cat", List.of(mine.toString()), OPTIONS);
    assertThat(r.exitCode()).isNotZero();
    assertThat(r.stderrText()).contains("Permission denied");
  }

  @Test
  @Tag("root")
  void aTerminalSessionRunsAsTheUserOnItsOwnPty() throws Exception {
    try (ProcessSession s = asNobody().start(ProcessSpec.terminal(List.of("sh")))) {
      long[] cursor = {0};
      // Markers are computed so that the terminal's echo of the command line cannot match them.
      s.write(
          "echo u=$(id -u) t=$(tty) && echo ok-$((1)) > /dev/tty\n"
              .getBytes(StandardCharsets.UTF_8));
      String out = readUntil(s, cursor, "ok-1");
      assertThat(out).contains("u=" + NOBODY, "t=/dev/pts/");
      s.write("exit 0\n".getBytes(StandardCharsets.UTF_8));
      assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(0));
    }
  }

  @Test
  @Tag("root")
  void theReportSaysWhoTheChildrenAre() {
    assertThat(asNobody().capabilities())
        .filteredOn(c -> c.dimension() == Dimension.USER)
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.enforced()).isTrue();
              assertThat(c.detail()).contains("uid " + NOBODY, "the JVM stays uid 0");
            });
    assertThat(ConfinedRunner.builder(root.toString()).build().capabilities())
        .filteredOn(c -> c.dimension() == Dimension.USER)
        .singleElement()
        .extracting(Capability::detail)
        .asString()
        .contains("this JVM's user, uid 0");
  }

  @Test
  void negativeIdsAreRefused() {
    assertThatThrownBy(() -> ConfinedRunner.builder(root.toString()).runAs(-1, 0))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION));
  }
}
