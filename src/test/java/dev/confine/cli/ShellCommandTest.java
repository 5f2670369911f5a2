package dev.confine.cli;

import static dev.confine.testing.SessionReads.readUntil;
import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.local.LocalRunner;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code confine shell}, driven with piped input through {@link Main#run} and, for what only a real
 * terminal shows (raw mode, its restoration, Ctrl-C, window size), run as its own JVM on a pty that
 * the test holds.
 */
@Timeout(120)
class ShellCommandTest {
  @TempDir Path root;

  private record Run(int status, String out, String err) {}

  private Run run(String input, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            args,
            new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            Main.BACKEND);
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void runsTheCommandOnATerminalAndPassesItsStatusThrough() {
    Run r = run("", "shell", "--root", root.toString(), "--", "sh", "-c", "tty; exit 4");
    assertThat(r.status()).isEqualTo(4);
    assertThat(r.out()).contains("/dev/pts/");
  }

  @Test
  void pipedInputDrivesTheSessionAndItsEndIsEndOfFile() {
    Run r = run("echo from-input\n", "shell", "--root", root.toString(), "--", "sh");
    assertThat(r.status()).isZero();
    assertThat(r.out()).contains("from-input");
  }

  @Test
  @org.junit.jupiter.api.Tag("confinement")
  void confinedShellsWriteOnlyInsideTheRoot(@TempDir Path outside) {
    dev.confine.testing.HostRequirements.require(
        dev.confine.linux.confinement.Landlock.availability().isAvailable(),
        "Landlock is not available here");
    Run r =
        run(
            "",
            "shell",
            "--confined",
            "--rootless",
            "--root",
            root.toString(),
            "--",
            "sh",
            "-c",
            "touch in && echo in-ok; touch " + outside.resolve("x") + " || echo out-refused");
    assertThat(r.status()).isZero();
    assertThat(r.out()).contains("in-ok", "out-refused");
    assertThat(root.resolve("in")).exists();
    assertThat(outside.resolve("x")).doesNotExist();
  }

  @Test
  void aSignalDeathIs128PlusTheSignal() {
    Run r = run("", "shell", "--root", root.toString(), "--", "sh", "-c", "kill -TERM $$");
    assertThat(r.status()).isEqualTo(128 + 15);
  }

  @Test
  void refusalsAreReportedWithExecsStatuses() {
    Run notFound = run("", "shell", "--root", root.toString(), "--", "no-such-program-xyz");
    assertThat(notFound.status()).isEqualTo(ExitStatus.NOT_FOUND);
    assertThat(notFound.err()).startsWith("confine: ");
    Run timeout = run("", "shell", "--timeout", "200ms", "--", "sleep", "30");
    assertThat(timeout.status()).isEqualTo(ExitStatus.TIMEOUT);
    Run usage = run("", "shell", "--timeout", "soon");
    assertThat(usage.status()).isEqualTo(ExitStatus.USAGE);
  }

  @Test
  void onARealTerminalKeysReachTheSessionSizeFollowsAndTheModeIsRestored() throws Exception {
    String java = ProcessHandle.current().info().command().orElseThrow();
    String confine =
        String.join(
            " ",
            quote(java),
            "--enable-native-access=ALL-UNNAMED",
            "-cp",
            quote(System.getProperty("java.class.path")),
            "dev.confine.cli.Main",
            "shell",
            "--root",
            quote(root.toString()),
            "--env",
            "'PS1=inner$ '",
            "--env",
            "ENV=/dev/null",
            "--",
            "sh",
            "-i");
    String script =
        "stty -g > before; " + confine + "; echo status=$?; stty -g > after; echo outer-done";
    LocalRunner runner = LocalRunner.create(root.toString());
    ExecOptions opts = ExecOptions.builder().workDir(root.toString()).build();
    try (ProcessSession outer =
        runner.start(
            ProcessSpec.terminal(List.of("sh", "-c", script)).withOptions(opts).withSize(30, 90))) {
      long[] cursor = {0};
      readUntil(outer, cursor, "inner$ ");
      outer.write("stty size\n".getBytes(StandardCharsets.UTF_8));
      readUntil(outer, cursor, "30 90");

      outer.resize(40, 120);
      Thread.sleep(500); // confine polls the size every 100 ms
      outer.write("stty size\n".getBytes(StandardCharsets.UTF_8));
      readUntil(outer, cursor, "40 120");

      // Ctrl-C on the user's terminal: in raw mode it is a byte for the session's terminal,
      // which interrupts the inner foreground job; confine itself is not signalled.
      outer.write("sleep 100\n".getBytes(StandardCharsets.UTF_8));
      readUntil(outer, cursor, "sleep 100");
      Thread.sleep(500);
      outer.write(new byte[] {0x03});
      readUntil(outer, cursor, "inner$ ");
      outer.write("echo alive-$((6*7))\n".getBytes(StandardCharsets.UTF_8)); // not the echo
      readUntil(outer, cursor, "alive-42");

      outer.write("exit 5\n".getBytes(StandardCharsets.UTF_8));
      readUntil(outer, cursor, "outer-done");
      assertThat(outer.waitFor().code()).isZero();
      String all = new String(outer.read(0, Integer.MAX_VALUE).bytes(), StandardCharsets.UTF_8);
      assertThat(all).contains("status=5");
    }
    String before = Files.readString(root.resolve("before"));
    assertThat(before).isNotBlank();
    assertThat(Files.readString(root.resolve("after"))).isEqualTo(before);
  }

  private static String quote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }
}
