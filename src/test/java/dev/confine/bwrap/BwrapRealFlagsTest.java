package dev.confine.bwrap;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The assembled flags against the real bubblewrap (Debian's package; {@code .ci/run} installs it),
 * as root and, in CI's unprivileged pass, as nobody: bwrap accepts them, and the posture they
 * promise holds (§10.8 and the hardening).
 */
@Tag("confinement")
class BwrapRealFlagsTest {
  @TempDir Path temp;

  private Path root;
  private BwrapSettings settings;

  @BeforeEach
  void setUp() throws IOException {
    HostRequirements.requireProgram("bwrap");
    root = Files.createDirectory(temp.toRealPath().resolve("root"));
    settings = BwrapSettings.resolve(root.toString(), null, List.of(), List.of());
  }

  private record Run(int exit, String out) {}

  private Run run(NetMode mode, String script) throws IOException, InterruptedException {
    ExecOptions opts =
        ExecOptions.builder()
            .env(EnvPolicy.allow("PATH").withInject(Map.of("ONLY", "this")))
            .net(NetPolicy.builder().mode(mode).build())
            .build();
    List<String> policy = new ArrayList<>(BwrapFlags.buildFlags(opts, System.getenv()));
    policy.addAll(BwrapFlags.hardeningFlags());
    List<String> fs =
        new ArrayList<>(
            BwrapFlags.filesystemFlags(settings.root().toString(), settings.writablePaths()));
    fs.addAll(BwrapFlags.netIsolationFlags(mode));
    List<String> cmd = new ArrayList<>();
    cmd.add(settings.binary().toString());
    cmd.addAll(
        BwrapFlags.commandLine(settings.extraFlags(), policy, fs, List.of("sh", "-c", script)));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return new Run(p.exitValue(), out);
  }

  @Test
  void denyAllWithTheHardeningHolds() throws IOException, InterruptedException {
    String probe = "/var/tmp/confine-bwrap-probe-" + UUID.randomUUID();
    Path hostTmpFile = Files.writeString(temp.resolve("host-only"), "x");
    Run r =
        run(
            NetMode.DENY_ALL,
            String.join(
                "; ",
                "echo pid=$$",
                "grep -E '^(CapPrm|CapEff|CapAmb|NoNewPrivs):' /proc/self/status",
                "echo ifaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ')",
                "echo run=$(ls -A /run | wc -l)",
                "echo env=$(env | grep -v -e '^PATH=' -e '^PWD=' -e '^SHLVL=' -e '^_=' | sort)",
                "echo sid=$(cut -d' ' -f6 /proc/self/stat) tty=$(cut -d' ' -f7 /proc/self/stat)",
                "echo inside > " + root + "/written && echo root-writable",
                "touch " + probe + " 2>/dev/null || echo host-read-only",
                "[ -e " + hostTmpFile + " ] || echo host-tmp-hidden",
                "echo private > /tmp/private && echo tmp-writable"));
    assertThat(r.exit()).as(r.out()).isZero();
    assertThat(r.out())
        .contains("pid=2\n") // bwrap's own init is pid 1 in the new PID namespace
        .contains("CapPrm:\t0000000000000000")
        .contains("CapEff:\t0000000000000000")
        .contains("CapAmb:\t0000000000000000")
        .contains("NoNewPrivs:\t1")
        .contains("ifaces=lo\n")
        .contains("run=0\n")
        .contains("env=ONLY=this\n")
        .contains("tty=0\n")
        .contains("root-writable\n")
        .contains("host-read-only\n")
        .contains("host-tmp-hidden\n")
        .contains("tmp-writable\n");
    assertThat(root.resolve("written")).hasContent("inside");
    assertThat(Path.of(probe)).doesNotExist();
    assertThat(Path.of("/tmp/private")).doesNotExist();
  }

  @Test
  void theDefaultModeSharesTheHostNetworkAndRun() throws IOException, InterruptedException {
    Run r = run(NetMode.DEFAULT, "echo ifaces=$(tail -n +3 /proc/net/dev | wc -l)");
    long hostIfaces = Files.readAllLines(Path.of("/proc/net/dev")).size() - 2;
    assertThat(r.exit()).as(r.out()).isZero();
    assertThat(r.out()).isEqualTo("ifaces=" + hostIfaces + "\n");
  }

  @Test
  void theChildCannotRemountAReadOnlyBindWritable() throws IOException, InterruptedException {
    // Without --cap-drop ALL, bwrap run by root leaves the child root's capabilities, and this
    // remount succeeds.
    Run r = run(NetMode.DENY_ALL, "mount -o remount,bind,rw / 2>&1; echo exit=$?");
    assertThat(r.out()).contains("exit=").doesNotContain("exit=0\n");
  }
}
