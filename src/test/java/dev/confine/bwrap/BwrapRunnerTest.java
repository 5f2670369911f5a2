package dev.confine.bwrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link BwrapRunner} with the real bubblewrap (Debian's package; {@code .ci/run} installs it), as
 * root and, in CI's unprivileged pass, as nobody: the posture of seed §10.8 and the hardening hold,
 * results are classified as the local runner's, timeouts kill the whole tree, caps hold inside.
 */
@Tag("confinement")
class BwrapRunnerTest {
  @TempDir Path temp;

  private Path root;
  private Path writable;
  private BwrapRunner runner;

  @BeforeEach
  void setUp() throws IOException {
    HostRequirements.requireProgram("bwrap");
    root = Files.createDirectory(temp.toRealPath().resolve("root"));
    writable = Files.createDirectory(temp.toRealPath().resolve("writable"));
    runner =
        BwrapRunner.builder(root.toString())
            .writablePaths(writable.toString())
            .hostEnvironment(System::getenv)
            .build();
  }

  private record Run(int exit, String out) {}

  private static ExecOptions options(NetMode mode) {
    return ExecOptions.builder()
        .timeout(Duration.ofSeconds(30))
        .env(EnvPolicy.allow("PATH").withInject(Map.of("ONLY", "this")))
        .net(NetPolicy.builder().mode(mode).build())
        .build();
  }

  private Run run(NetMode mode, String script) {
    ExecResult r = runner.exec("sh", List.of("-c", script + " 2>&1"), options(mode));
    return new Run(r.exitCode(), r.stdoutText() + r.stderrText());
  }

  @Test
  void denyAllWithTheHardeningHolds() throws IOException {
    String probe = "/var/tmp/confine-bwrap-probe-" + UUID.randomUUID();
    Path hostTmpFile = Files.writeString(temp.resolve("host-only"), "x");
    Path outside = Files.createDirectory(temp.resolve("outside"));
    Files.createSymbolicLink(root.resolve("link"), outside);
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
                "echo private > /tmp/private && echo tmp-writable",
                "echo w > " + writable + "/w && echo writable-path",
                "echo out > link/escaped 2>/dev/null || echo link-out-refused",
                "echo cwd=$(pwd)"));
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
        .contains("tmp-writable\n")
        .contains("writable-path\n")
        .contains("link-out-refused\n")
        .contains("cwd=" + root + "\n");
    assertThat(writable.resolve("w")).hasContent("w");
    assertThat(outside.resolve("escaped")).doesNotExist();
    assertThat(root.resolve("written")).hasContent("inside");
    assertThat(Path.of(probe)).doesNotExist();
    assertThat(Path.of("/tmp/private")).doesNotExist();
  }

  @Test
  void theDefaultModeSharesTheHostNetworkAndRun() throws IOException {
    Run r = run(NetMode.DEFAULT, "echo ifaces=$(tail -n +3 /proc/net/dev | wc -l)");
    long hostIfaces = Files.readAllLines(Path.of("/proc/net/dev")).size() - 2;
    assertThat(r.exit()).as(r.out()).isZero();
    assertThat(r.out()).isEqualTo("ifaces=" + hostIfaces + "\n");
  }

  @Test
  void theChildCannotRemountAReadOnlyBindWritable() {
    // Without --cap-drop ALL, bwrap run by root leaves the child root's capabilities, and this
    // remount succeeds.
    Run r = run(NetMode.DENY_ALL, "mount -o remount,bind,rw / 2>&1; echo exit=$?");
    assertThat(r.out()).contains("exit=").doesNotContain("exit=0\n");
  }

  @Test
  void theExitStatusPassesAndAMissingCommandIsBwrapsFailure() {
    ExecResult three = runner.exec("sh", List.of("-c", "exit 3"), options(NetMode.DENY_ALL));
    assertThat(three.exitCode()).isEqualTo(3);
    // As in the seed: bwrap's own failure to exec the command inside is its exit status (1) and
    // its message, not NOT_FOUND.
    ExecResult missing =
        runner.exec("no-such-command-confine", List.of(), options(NetMode.DENY_ALL));
    assertThat(missing.exitCode()).isEqualTo(1);
    assertThat(missing.stderrText()).contains("bwrap: execvp no-such-command-confine");
  }

  /** From a virtual thread too (its exec runs on a platform thread that outlives bwrap). */
  @Test
  void aVirtualThreadsExecWorks() throws Exception {
    ExecResult[] r = new ExecResult[1];
    Thread t =
        Thread.ofVirtual()
            .start(
                () ->
                    r[0] =
                        runner.exec(
                            "sh", List.of("-c", "sleep 1; echo ok"), options(NetMode.DENY_ALL)));
    t.join();
    assertThat(r[0].stdoutText()).isEqualTo("ok\n");
  }

  @Test
  void aTimeoutKillsTheWholeTreeInside() throws IOException {
    long start = System.nanoTime();
    assertThatThrownBy(
            () ->
                runner.exec(
                    "sh",
                    List.of("-c", "setsid sleep 300.4242 & sleep 300.4343"),
                    ExecOptions.builder()
                        .timeout(Duration.ofSeconds(1))
                        .net(NetPolicy.denyAll())
                        .build()))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.TIMEOUT));
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    assertThat(processesRunning("300.4242")).as("the setsid escapee").isZero();
    assertThat(processesRunning("300.4343")).isZero();
  }

  /** How many host processes have {@code word} in their command line. */
  private static long processesRunning(String word) throws IOException {
    long n = 0;
    try (var dirs = Files.list(Path.of("/proc"))) {
      for (Path d : dirs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
        try {
          if (new String(Files.readAllBytes(d.resolve("cmdline")), StandardCharsets.UTF_8)
              .contains(word)) {
            n++;
          }
        } catch (IOException e) {
          // gone
        }
      }
    }
    return n;
  }

  @Test
  void aMemoryCapHoldsInside() {
    HostRequirements.requireProgram("python3");
    assertThatThrownBy(
            () ->
                runner.exec(
                    "python3",
                    List.of("-c", "b = bytearray(512 << 20); print('allocated')"),
                    ExecOptions.builder()
                        .timeout(Duration.ofSeconds(30))
                        .net(NetPolicy.denyAll())
                        .resources(ResourceLimits.builder().memoryBytes(64L << 20).build())
                        .build()))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.BUDGET_EXCEEDED));
  }

  @Test
  void proxyModesAreNotAvailableYetAndSaySo() {
    assertThatThrownBy(
            () ->
                runner.exec(
                    "true",
                    List.of(),
                    ExecOptions.builder()
                        .net(NetPolicy.allowList(NetRule.allow("example.test")))
                        .build()))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE))
        .hasMessageContaining("ALLOW_LIST")
        .hasMessageContaining("bubblewrap");
  }

  @Test
  void theReportSaysWhatHoldsAndHow() {
    List<Capability> rows = runner.capabilities();
    assertThat(rows)
        .filteredOn(c -> c.dimension() == Dimension.NET_DENY_ALL)
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.enforced()).isTrue();
              assertThat(c.detail()).contains("--unshare-net", "--tmpfs /run", "stay reachable");
            });
    assertThat(rows)
        .filteredOn(c -> c.dimension() == Dimension.NET_ALLOW_LIST)
        .singleElement()
        .satisfies(c -> assertThat(c.enforced()).isFalse());
    assertThat(runner.enforcement().enforces(NetMode.DENY_ALL)).isTrue();
    assertThat(runner.enforcement().enforces(NetMode.ALLOW_LIST)).isFalse();
  }

  @Test
  void aWeakeningExtraFlagIsRefusedAtBuild() {
    assertThatThrownBy(() -> BwrapRunner.builder(root.toString()).extraFlags("--share-net").build())
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION))
        .hasMessageContaining("\"--share-net\" can weaken sandbox enforcement");
  }
}
