package dev.confine.confined;

import static dev.confine.testing.SessionReads.readAll;
import static dev.confine.testing.SessionReads.readUntil;
import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.NetPolicy;
import dev.confine.linux.confinement.Landlock;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import dev.confine.testing.HostRequirements;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Sessions of the confined runner: the same confinement as its execs, on a pty or pipes. */
@Tag("confinement")
@Timeout(60)
class ConfinedSessionTest {
  @TempDir Path root;
  @TempDir Path outside;

  @BeforeEach
  void needsLandlock() {
    HostRequirements.require(Landlock.availability());
  }

  private ConfinedRunner runner() {
    return ConfinedRunner.builder(root.toString()).rootless(true).build();
  }

  @Test
  void aTerminalSessionWritesOnlyInsideTheBounds() throws Exception {
    ConfinedRunner runner = runner();
    Path denied = outside.resolve("denied");
    try (ProcessSession s = runner.start(ProcessSpec.terminal(List.of("sh")))) {
      long[] cursor = {0};
      s.write(
          ("tty; touch inside && echo inside-$((1)); touch "
                  + denied
                  + " || echo outside-$((2)); touch \"$TMPDIR/t\" && echo tmp-$((3))\n")
              .getBytes(StandardCharsets.UTF_8));
      // Markers are computed so that the terminal's echo of the command line cannot match them.
      String out = readUntil(s, cursor, "tmp-3");
      assertThat(out).contains("/dev/pts/", "inside-1", "outside-2");
      s.write("exit 0\n".getBytes(StandardCharsets.UTF_8));
      assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(0));
    }
    assertThat(root.resolve("inside")).exists();
    assertThat(denied).doesNotExist();
  }

  @Test
  void aTerminalSessionUsesItsOwnPtyAndNoOther() throws Exception {
    HostRequirements.requireProgram("python3");
    // Another session's pty stands for any other terminal of this user.
    try (ProcessSession other = runner().start(ProcessSpec.terminal(List.of("sh")));
        ProcessSession s = runner().start(ProcessSpec.terminal(List.of("sh")))) {
      long[] c = {0};
      other.write("tty; echo end-$((1))\n".getBytes(StandardCharsets.UTF_8));
      Matcher m = Pattern.compile("/dev/pts/\\d+").matcher(readUntil(other, c, "end-1"));
      assertThat(m.find()).isTrue();
      String otherTty = m.group();
      long[] cursor = {0};
      String script =
          "import errno, fcntl, os, termios\n"
              + "def t(name, f):\n"
              + "    try:\n"
              + "        f(); print(name, 'ok')\n"
              + "    except OSError as e:\n"
              + "        print(name, errno.errorcode[e.errno])\n"
              + "t('own', lambda: os.write(os.open(os.ttyname(0), os.O_RDWR), b''))\n"
              + "t('devtty', lambda: os.write(os.open('/dev/tty', os.O_RDWR), b''))\n"
              + "t('size', lambda: fcntl.ioctl(0, termios.TIOCGWINSZ, b'12345678'))\n"
              + "t('sti', lambda: fcntl.ioctl(0, termios.TIOCSTI, b'x'))\n"
              + "t('other', lambda: os.open('"
              + otherTty
              + "', os.O_RDWR | os.O_NOCTTY))\n"
              + "print('d' + 'one')\n";
      Path file = Files.writeString(root.resolve("t.py"), script);
      s.write(("python3 " + file + "\n").getBytes(StandardCharsets.UTF_8));
      String out = readUntil(s, cursor, "done");
      assertThat(out).contains("own ok", "devtty ok", "size ok", "sti EPERM", "other EACCES");
      s.write("exit 0\n".getBytes(StandardCharsets.UTF_8));
      assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(0));
    }
  }

  @Test
  void denyAllHoldsInAPipeSession() throws Exception {
    HostRequirements.requireProgram("python3");
    ExecOptions deny = ExecOptions.builder().net(NetPolicy.denyAll()).build();
    String script =
        "import socket\n"
            + "try:\n"
            + "    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
            + "    print('inet-open')\n"
            + "except PermissionError:\n"
            + "    print('inet-refused')\n"
            + "socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            + "print('unix-ok')\n";
    try (ProcessSession s =
        runner().start(ProcessSpec.pipes(List.of("python3", "-c", script)).withOptions(deny))) {
      assertThat(s.waitFor().code()).isZero();
      assertThat(readAll(s)).isEqualTo("inet-refused\nunix-ok\n");
    }
  }

  @Test
  void theSessionsTmpdirIsPrivateAndEmptiedWhenItCloses() throws Exception {
    ConfinedRunner runner = runner();
    String tmp;
    try (ProcessSession s =
        runner.start(
            ProcessSpec.pipes(List.of("sh", "-c", "echo $TMPDIR; touch \"$TMPDIR/left\"")))) {
      s.waitFor();
      tmp = readAll(s).trim();
      assertThat(Path.of(tmp, "left")).exists();
    }
    // Emptied for the next session where a cgroup held the tree; gone where the sampler did.
    if (Files.exists(Path.of(tmp))) {
      assertThat(Path.of(tmp)).isEmptyDirectory();
    }
    assertThat(Path.of(tmp, "left")).doesNotExist();
  }

  @Test
  void theConfinedRunnerIsItsOwnManager() {
    ConfinedRunner runner = runner();
    assertThat(ProcessManager.of(runner)).containsSame(runner);
  }
}
