package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.confined.ConfinedModes.Mode;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.testing.ForkedJvm;
import dev.confine.testing.HostRequirements;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A confined child attacks the host, in every confined mode this host can run ({@link
 * ConfinedModes}): as root (CI's first run) the namespace, read-only-host and run-as modes as well
 * as the rootless ones; as nobody (CI's second run) the rootless ones. Each test covers a family of
 * attacks, not one reproducer: other terminals, capabilities, other processes, socket families.
 */
@Tag("confinement")
class ConfinedBoundaryTest {
  @TempDir Path root;

  @BeforeEach
  void needsTheConfinement() throws IOException {
    HostRequirements.require(Landlock.availability());
    HostRequirements.require(SeccompFilter.availability());
    HostRequirements.requireProgram("python3");
    // The run-as mode's child (nobody) writes in the root too.
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxrwxrwx"));
  }

  static Stream<Mode> modes() {
    return ConfinedModes.available().stream();
  }

  private ExecResult python(Mode mode, String script, Map<String, String> env) {
    ExecOptions o = mode.options();
    ExecOptions.Builder b =
        ExecOptions.builder()
            .timeout(o.timeout())
            .net(o.net())
            .env(EnvPolicy.inheritAll().withInject(env));
    return mode.runner(root).exec(ConfinedModes.PYTHON, List.of("-c", script), b.build());
  }

  /** Lines "name result" of a script's output. */
  private static Map<String, String> results(ExecResult r) {
    assertThat(r.exitCode()).as(r.stderrText()).isZero();
    Map<String, String> out = new LinkedHashMap<>();
    for (String line : r.stdoutText().lines().toList()) {
      int sp = line.indexOf(' ');
      out.put(line.substring(0, sp), line.substring(sp + 1));
    }
    return out;
  }

  private static final String OPEN =
      String.join(
          "\n",
          "import errno, fcntl, os, sys, termios",
          "def attempt(name, path, flags):",
          "    try:",
          "        fd = os.open(path, flags | os.O_NOCTTY)",
          "    except OSError as e:",
          "        print(name, errno.errorcode[e.errno], flush=True)",
          "        return None",
          "    print(name, 'opened', flush=True)",
          "    return fd",
          "");

  /**
   * A process outside the sandbox that holds a terminal, as an operator's shell does, and reports
   * anything that reaches it: output written to its terminal (read from the master) and input
   * pushed into it (read from the slave).
   */
  private static final class OperatorTerminal implements AutoCloseable {
    private static final String HOLDER =
        String.join(
            "\n",
            "import os, pty, select, sys, time",
            "m, s = pty.openpty()",
            "print(os.ttyname(s), flush=True)",
            "sys.stdin.readline()", // the test says when the attack is over
            "got = b''",
            "for fd in (m, s):",
            "    while select.select([fd], [], [], 0.2)[0]:",
            "        got += os.read(fd, 4096)",
            "print('received', repr(got), flush=True)",
            "");

    final Process process;
    final BufferedReader out;
    final String slave;

    OperatorTerminal() throws IOException {
      process =
          new ProcessBuilder(ConfinedModes.PYTHON, "-c", HOLDER).redirectErrorStream(true).start();
      out =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      slave = out.readLine();
      assertThat(slave).startsWith("/dev/pts/");
    }

    /** What reached the terminal, once the attack is over. */
    String received() throws IOException {
      process.getOutputStream().write('\n');
      process.getOutputStream().flush();
      return out.readLine();
    }

    @Override
    public void close() {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @ParameterizedTest
  @MethodSource("modes")
  void anotherTerminalCanBeNeitherReadNorWrittenNorInjected(Mode mode) throws Exception {
    try (OperatorTerminal operator = new OperatorTerminal()) {
      String script =
          OPEN
              + String.join(
                  "\n",
                  "t = os.environ['OTHER']",
                  "for name, flags in (('read', os.O_RDONLY), ('write', os.O_WRONLY),",
                  "                    ('readwrite', os.O_RDWR)):",
                  "    fd = attempt(name, t, flags)",
                  "    if fd is not None:",
                  "        try:",
                  "            os.write(fd, b'written-by-child\\n')",
                  "        except OSError:",
                  "            pass",
                  "        try:",
                  "            fcntl.ioctl(fd, termios.TIOCSTI, b'X')",
                  "            print('tiocsti-' + name, 'ok', flush=True)",
                  "        except OSError as e:",
                  "            print('tiocsti-' + name, errno.errorcode[e.errno], flush=True)",
                  "pid = os.environ['HOLDER']",
                  "for n in os.listdir('/proc/' + pid + '/fd') if os.access('/proc/' + pid + '/fd',"
                      + " os.R_OK) else []:",
                  "    attempt('procfd' + n, '/proc/' + pid + '/fd/' + n, os.O_RDWR)",
                  "attempt('console', '/dev/console', os.O_RDONLY)",
                  "attempt('tty1', '/dev/tty1', os.O_RDONLY)",
                  "attempt('ptmx-dir', '/dev/pts/ptmx', os.O_RDWR)",
                  "");
      ExecResult r =
          python(
              mode,
              script,
              Map.of("OTHER", operator.slave, "HOLDER", String.valueOf(operator.process.pid())));
      Map<String, String> res = results(r);
      assertThat(res).containsEntry("read", "EACCES");
      assertThat(res).containsEntry("write", "EACCES");
      assertThat(res).containsEntry("readwrite", "EACCES");
      assertThat(res).doesNotContainKeys("tiocsti-read", "tiocsti-write", "tiocsti-readwrite");
      res.forEach(
          (k, v) -> {
            if (k.startsWith("procfd")) {
              assertThat(v).as(k).isIn("EACCES", "EPERM", "ENOENT");
            }
          });
      for (String dev : List.of("console", "tty1", "ptmx-dir")) {
        assertThat(res.get(dev)).as(dev).isIn("EACCES", "ENOENT");
      }
      assertThat(operator.received()).isEqualTo("received b''");
    }
  }

  @ParameterizedTest
  @MethodSource("modes")
  void harmlessDevicesStillWork(Mode mode) {
    String script =
        OPEN
            + String.join(
                "\n",
                "for d in ('null', 'zero', 'full', 'urandom', 'random'):",
                "    fd = attempt(d, '/dev/' + d, os.O_RDWR)",
                "    if fd is not None: os.read(fd, 1) if d != 'null' else os.write(fd, b'x')",
                "attempt('tty', '/dev/tty', os.O_RDWR)", // no controlling terminal here
                "attempt('disk', [p for p in ('/dev/vda', '/dev/sda', '/dev/nvme0n1', '/dev/loop0')"
                    + " if os.path.exists(p)][0], os.O_RDONLY)",
                "attempt('kmsg', '/dev/kmsg', os.O_RDONLY)",
                "");
    Map<String, String> res = results(python(mode, script, Map.of()));
    for (String d : List.of("null", "zero", "full", "urandom", "random")) {
      assertThat(res).containsEntry(d, "opened");
    }
    assertThat(res).containsEntry("tty", "ENXIO"); // allowed, but a pipe exec has no terminal
    assertThat(res).containsEntry("disk", "EACCES");
    assertThat(res.get("kmsg")).isIn("EACCES", "EPERM");
  }

  private static final String STATUS =
      "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|Uid|Gid|Groups):' /proc/self/status";

  @ParameterizedTest
  @MethodSource("modes")
  void childrenHaveNoCapabilitiesAndCannotGainAny(Mode mode) {
    ExecResult r =
        mode.runner(root)
            .exec(
                "sh",
                List.of("-c", STATUS + "; echo via-exec; exec sh -c \"" + STATUS + "\""),
                mode.options());
    assertThat(r.exitCode()).as(r.stderrText()).isZero();
    List<String> lines = r.stdoutText().lines().toList();
    assertThat(lines.stream().filter(l -> l.startsWith("Cap")))
        .hasSize(10)
        .allSatisfy(
            l -> {
              if (!l.startsWith("CapBnd") || HostRequirements.isRoot()) {
                assertThat(l).as(l).endsWith("0000000000000000");
              }
            });
  }

  @ParameterizedTest
  @MethodSource("modes")
  void whatCapabilitiesWouldAllowIsRefused(Mode mode) throws IOException {
    String jvm = String.valueOf(ProcessHandle.current().pid());
    String script =
        OPEN
            + String.join(
                "\n",
                "import socket, ctypes",
                "try:",
                "    socket.sethostname(socket.gethostname())", // the same name: nothing changes
                "    print('sethostname ok')",
                "except OSError as e:",
                "    print('sethostname', errno.errorcode[e.errno])",
                "libc = ctypes.CDLL(None, use_errno=True)",
                "buf = ctypes.create_string_buffer(4096)",
                "r = libc.klogctl(3, buf, 4096)", // SYSLOG_ACTION_READ_ALL
                "print('klogctl', 'ok' if r >= 0 else errno.errorcode[ctypes.get_errno()])",
                "for f in ('environ', 'maps', 'pagemap', 'mem', 'auxv'):",
                "    attempt('jvm-' + f, '/proc/' + os.environ['JVM'] + '/' + f, os.O_RDONLY)",
                "fd = attempt('private', os.environ['PRIVATE'], os.O_RDONLY)",
                "try:",
                "    os.chown(os.environ['MINE'], 12345, 12345)",
                "    print('chown ok')",
                "except OSError as e:",
                "    print('chown', errno.errorcode[e.errno])",
                "");
    Path priv = Files.writeString(root.resolve("private"), "secret");
    Files.setPosixFilePermissions(priv, PosixFilePermissions.fromString("rw-------"));
    if (HostRequirements.isRoot()) {
      // Owned by someone else: only CAP_DAC_OVERRIDE would let root read it.
      Files.setAttribute(priv, "unix:uid", 12345);
    }
    Path mine = Files.writeString(root.resolve("mine"), "x");
    Files.setPosixFilePermissions(mine, PosixFilePermissions.fromString("rw-rw-rw-"));
    Map<String, String> res =
        results(
            python(
                mode,
                script,
                Map.of("JVM", jvm, "PRIVATE", priv.toString(), "MINE", mine.toString())));
    assertThat(res).containsEntry("sethostname", "EPERM");
    if (Files.readAllLines(Path.of("/proc/sys/kernel/dmesg_restrict")).equals(List.of("1"))) {
      assertThat(res).containsEntry("klogctl", "EPERM");
    }
    for (String f : List.of("environ", "maps", "pagemap", "mem", "auxv")) {
      assertThat(res.get("jvm-" + f)).as(f).isIn("EACCES", "EPERM");
    }
    if (HostRequirements.isRoot()) { // without root the test cannot give the file away
      assertThat(res).containsEntry("private", "EACCES");
    }
    assertThat(res).containsEntry("chown", "EPERM");
  }

  @ParameterizedTest
  @MethodSource("modes")
  void callsOnTheJvmAreRefusedAndItSurvives(Mode mode) throws Exception {
    ForkedJvm.Outcome o =
        ForkedJvm.run(CrossProcessAttackMain.class, Duration.ofSeconds(120), mode.name());
    assertThat(o.exitCode()).as(o.output()).isZero();
    Map<String, String> res = new LinkedHashMap<>();
    for (String line : o.output().lines().toList()) {
      int sp = line.indexOf(' ');
      if (sp > 0) {
        res.put(line.substring(0, sp), line.substring(sp + 1));
      }
    }
    for (String call : CrossProcessAttackMain.ON_PARENT) {
      assertThat(res).as(o.output()).containsEntry(call, "EPERM");
    }
    assertThat(res).containsEntry("self-prlimit64", "ok");
    assertThat(res).containsEntry("self-setpriority", "ok");
    assertThat(res).containsEntry("self-sched_setaffinity", "ok");
    assertThat(res.get("cpu-limit")).contains("unlimited");
    assertThat(res.get("after")).isEqualTo(res.get("before")).isNotNull();
    assertThat(res).containsEntry("spun", "true");
    assertThat(o.output()).endsWith("alive\n");
  }

  @ParameterizedTest
  @MethodSource("modes")
  void denyAllLeavesOnlyTheSocketFamiliesItNames(Mode mode) {
    if (mode.options().net().mode() != NetMode.DENY_ALL) {
      return; // the host's network: no family is refused
    }
    String script =
        String.join(
            "\n",
            "import ctypes, errno",
            "libc = ctypes.CDLL(None, use_errno=True)",
            "for family in range(0, 46):",
            "    for kind, proto in ((1, 0), (2, 0), (3, 0), (5, 0), (3, 4), (2, 15)):",
            "        ctypes.set_errno(0)",
            "        fd = libc.socket(family, kind, proto)",
            "        e = ctypes.get_errno()",
            "        print('%d/%d/%d' % (family, kind, proto),"
                + " 'ok' if fd >= 0 else errno.errorcode.get(e, str(e)), flush=True)",
            "        if fd >= 0: libc.close(fd)",
            "");
    Map<String, String> res = results(python(mode, script, Map.of()));
    boolean namespace = !mode.name().startsWith("rootless");
    res.forEach(
        (k, v) -> {
          String[] f = k.split("/");
          int family = Integer.parseInt(f[0]);
          int proto = Integer.parseInt(f[2]);
          boolean allowed =
              family == 1
                  || (namespace && (family == 2 || family == 10))
                  || (namespace && family == 16 && proto == 0);
          if (!allowed) {
            assertThat(v).as("socket(%s) must be refused by the filter", k).isEqualTo("EACCES");
          }
        });
    assertThat(res.get("1/1/0")).isEqualTo("ok");
  }
}
