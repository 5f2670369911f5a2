package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.Enforcement;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.confinement.ConnectSupervisor;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rootless mechanisms (Landlock, seccomp), forced with {@code rootless(true)} so that a run as
 * root tests the same path as a run without root.
 */
@Tag("confinement")
class ConfinedRunnerTest {
  @TempDir Path root;
  @TempDir Path outside;
  @TempDir Path writable;

  @BeforeEach
  void needsLandlock() {
    HostRequirements.require(Landlock.availability());
  }

  private ConfinedRunner runner() {
    return ConfinedRunner.builder(root.toString())
        .writablePaths(writable.toString())
        .rootless(true)
        .build();
  }

  private ExecResult sh(String script) {
    return runner().exec("sh", List.of("-c", script), timeout());
  }

  private static ExecOptions timeout() {
    return ExecOptions.builder().timeout(Duration.ofSeconds(30)).build();
  }

  private static ExecOptions denyAll() {
    return ExecOptions.builder().timeout(Duration.ofSeconds(30)).net(NetPolicy.denyAll()).build();
  }

  private static void requirePython() {
    HostRequirements.requireProgram("python3");
  }

  @Test
  void reportsWhatItEnforces() {
    Enforcement e = runner().enforcement();
    assertThat(e.envAllowList()).isTrue();
    assertThat(e.filesystemBounds()).isTrue();
    assertThat(e.netModes())
        .isEqualTo(
            !SeccompFilter.availability().isAvailable()
                ? List.of()
                : ConnectSupervisor.availability().isAvailable()
                    ? List.of(NetMode.DENY_ALL, NetMode.ALLOW_LIST, NetMode.PROXY)
                    : List.of(NetMode.DENY_ALL));
    // Caps: ConfinedCapsTest.
    assertThat(e.memoryCap() && e.cpuCap()).isTrue();
  }

  @Test
  void touchInsideTheRootWorksAndOutsideIsRefused() {
    ExecResult in = runner().exec("touch", List.of(root.resolve("a").toString()), timeout());
    assertThat(in.exitCode()).isZero();
    assertThat(root.resolve("a")).exists();

    ExecResult out = runner().exec("touch", List.of(outside.resolve("b").toString()), timeout());
    assertThat(out.exitCode()).isNotZero();
    assertThat(out.stderrText()).contains("Permission denied");
    assertThat(outside.resolve("b")).doesNotExist();
  }

  @Test
  void cpIntoAWritablePathWorksAndOutsideIsRefused() throws IOException {
    Files.writeString(root.resolve("src"), "data");
    ExecResult ok =
        runner().exec("cp", List.of("src", writable.resolve("dst").toString()), timeout());
    assertThat(ok.exitCode()).isZero();
    assertThat(writable.resolve("dst")).hasContent("data");

    ExecResult refused =
        runner().exec("cp", List.of("src", outside.resolve("dst").toString()), timeout());
    assertThat(refused.exitCode()).isNotZero();
    assertThat(refused.stderrText()).contains("Permission denied");
    assertThat(outside.resolve("dst")).doesNotExist();
  }

  @Test
  void shellRedirectOutsideIsRefused() throws IOException {
    Path existing = Files.writeString(outside.resolve("existing"), "keep");
    ExecResult r = sh("echo x > " + outside.resolve("file") + "; echo y > " + existing);
    assertThat(r.exitCode()).isNotZero();
    assertThat(r.stderrText()).contains("Permission denied");
    assertThat(outside.resolve("file")).doesNotExist();
    assertThat(existing).hasContent("keep");
    assertThat(sh("echo x > inside && cat inside").stdoutText()).isEqualTo("x\n");
  }

  @Test
  void hardLinksAndRenamesAcrossTheBoundAreRefused() throws IOException {
    Path secret = Files.writeString(outside.resolve("secret"), "keep");
    Files.writeString(root.resolve("mine"), "mine");

    // a link inside the root to a file outside would make it writable
    assertThat(sh("ln " + secret + " link").exitCode()).isNotZero();
    assertThat(root.resolve("link")).doesNotExist();
    // a link outside to a file inside
    assertThat(sh("ln mine " + outside.resolve("mine")).exitCode()).isNotZero();
    assertThat(outside.resolve("mine")).doesNotExist();
    // renames either way
    assertThat(sh("mv " + secret + " stolen").exitCode()).isNotZero();
    assertThat(secret).hasContent("keep");
    assertThat(root.resolve("stolen")).doesNotExist();
    assertThat(sh("mv mine " + outside.resolve("moved")).exitCode()).isNotZero();
    assertThat(outside.resolve("moved")).doesNotExist();
    // within the bounds, both work
    assertThat(sh("ln mine link2 && mv link2 " + writable.resolve("moved")).exitCode()).isZero();
    assertThat(writable.resolve("moved")).hasContent("mine");
  }

  @Test
  void writingThroughASymlinkThatPointsOutsideIsRefused() throws IOException {
    Path target = Files.writeString(outside.resolve("target"), "keep");
    Files.createSymbolicLink(root.resolve("link"), target);
    Files.createSymbolicLink(root.resolve("dirlink"), outside);
    ExecResult r = sh("echo x > link");
    assertThat(r.exitCode()).isNotZero();
    assertThat(r.stderrText()).contains("Permission denied");
    assertThat(sh("echo x > dirlink/new").exitCode()).isNotZero();
    assertThat(target).hasContent("keep");
    assertThat(outside.resolve("new")).doesNotExist();
  }

  @Test
  void pythonOpenForWritingOutsideIsRefused() {
    requirePython();
    String outsideFile = outside.resolve("py").toString();
    ExecResult r =
        runner()
            .exec(
                "python3", List.of("-c", "open('" + outsideFile + "', 'w').write('x')"), timeout());
    assertThat(r.exitCode()).isNotZero();
    assertThat(r.stderrText()).contains("PermissionError");
    assertThat(Path.of(outsideFile)).doesNotExist();
    ExecResult in =
        runner().exec("python3", List.of("-c", "open('inside', 'w').write('x')"), timeout());
    assertThat(in.exitCode()).isZero();
  }

  @Test
  void readsStayOpenAndTheScratchTmpdirIsPrivateAndEmptiedAfterEachExec() throws IOException {
    Path readable = Files.writeString(outside.resolve("readable"), "visible\n");
    ConfinedRunner runner = runner();
    String script =
        "cat "
            + readable
            + " && ls -A \"$TMPDIR\" && mkdir \"$TMPDIR/d\" && echo t > \"$TMPDIR/d/t\""
            + " && echo \"$TMPDIR\"";
    ExecResult r = runner.exec("sh", List.of("-c", script), timeout());
    assertThat(r.exitCode()).as(r.stderrText()).isZero();
    assertThat(r.stdoutText()).startsWith("visible\n");
    Path tmp = Path.of(r.stdoutText().lines().toList().get(1));
    assertThat(tmp.toString()).contains("confine-scratch-");
    if (HostRequirements.isRoot()) {
      // A cgroup held the tree from its start: nothing can still write into the directory, so it
      // is emptied after the exec and the next exec gets it again, empty ("ls -A" prints nothing).
      assertThat(tmp).isEmptyDirectory();
      ExecResult again = runner.exec("sh", List.of("-c", script), timeout());
      assertThat(again.stdoutText()).isEqualTo(r.stdoutText());
      assertThat(tmp).isEmptyDirectory();
    } else {
      // The sampler cannot rule out an escapee it never saw: the directory goes, the next exec
      // gets another, empty.
      assertThat(tmp).doesNotExist();
      ExecResult again = runner.exec("sh", List.of("-c", script), timeout());
      assertThat(again.exitCode()).isZero();
      assertThat(again.stdoutText().lines().toList().get(1)).isNotEqualTo(tmp.toString());
    }
    assertThat(sh("echo x > /dev/null").exitCode()).isZero();
  }

  @Test
  void aTmpdirSwappedForASymlinkDoesNotMakeTheJvmDeleteOutsideTheBounds() throws IOException {
    // The scratch parent is writable (it holds every exec's TMPDIR), so a child can replace its
    // TMPDIR with a link to a directory it may not write; the unconfined JVM empties TMPDIRs
    // after each exec and must not follow that link.
    Path victim = Files.createDirectory(outside.resolve("victim"));
    Files.writeString(victim.resolve("keep"), "precious\n");
    Files.createDirectory(victim.resolve("sub"));
    Files.writeString(victim.resolve("sub").resolve("keep"), "precious\n");
    ConfinedRunner runner = runner();
    ExecResult r =
        runner.exec(
            "sh",
            List.of(
                "-c", "rmdir \"$TMPDIR\" && ln -s " + victim + " \"$TMPDIR\" && ls \"$TMPDIR\"/"),
            timeout());
    assertThat(r.exitCode()).as(r.stderrText()).isZero();
    assertThat(r.stdoutText()).contains("keep"); // reading through the link is allowed
    assertThat(victim.resolve("keep")).hasContent("precious");
    assertThat(victim.resolve("sub").resolve("keep")).hasContent("precious");
    // The next exec gets a real, empty directory, not the link.
    ExecResult next =
        runner.exec(
            "sh",
            List.of("-c", "test -d \"$TMPDIR\" && test ! -L \"$TMPDIR\" && ls -A \"$TMPDIR\""),
            timeout());
    assertThat(next.exitCode()).as(next.stderrText()).isZero();
    assertThat(next.stdoutText()).isEmpty();
    assertThat(victim.resolve("keep")).hasContent("precious");
  }

  @Test
  void concurrentExecsHaveDistinctTmpdirs() throws Exception {
    ConfinedRunner runner = runner();
    // Each writes its TMPDIR into a file in the root and waits until all four have (the exec's
    // timeout ends a wait that never ends).
    String script =
        "echo \"$TMPDIR\" > \"$(mktemp -p .)\";"
            + " while [ $(ls | wc -l) -lt 4 ]; do sleep 0.01; done; echo \"$TMPDIR\"";
    List<String> dirs = new ArrayList<>();
    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<ExecResult>> running = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        running.add(threads.submit(() -> runner.exec("sh", List.of("-c", script), timeout())));
      }
      for (Future<ExecResult> f : running) {
        ExecResult r = f.get();
        assertThat(r.exitCode()).as(r.stderrText()).isZero();
        dirs.add(r.stdoutText().strip());
      }
    }
    assertThat(dirs).doesNotHaveDuplicates().hasSize(4);
  }

  @Test
  void denyAllRefusesInetSocketsButNotUnixSockets() {
    requirePython();
    HostRequirements.require(SeccompFilter.availability());
    ConfinedRunner runner = runner();
    for (String family : List.of("AF_INET", "AF_INET6")) {
      ExecResult r =
          runner.exec(
              "python3",
              List.of("-c", "import socket; socket.socket(socket." + family + ")"),
              denyAll());
      assertThat(r.exitCode()).as(family).isNotZero();
      assertThat(r.stderrText()).as(family).contains("PermissionError");
    }
    ExecResult unix =
        runner.exec(
            "python3",
            List.of(
                "-c",
                "import socket; a, b = socket.socketpair(socket.AF_UNIX); a.send(b'x');"
                    + " print(b.recv(1).decode()); socket.socket(socket.AF_UNIX)"),
            denyAll());
    assertThat(unix.exitCode()).as(unix.stderrText()).isZero();
    assertThat(unix.stdoutText()).isEqualTo("x\n");
    // the same runner without DENY_ALL: sockets work (a different confinement thread)
    ExecResult inet =
        runner.exec(
            "python3", List.of("-c", "import socket; socket.socket(socket.AF_INET)"), timeout());
    assertThat(inet.exitCode()).as(inet.stderrText()).isZero();
  }

  @Test
  void curlFailsUnderDenyAll() {
    HostRequirements.requireProgram("curl");
    HostRequirements.require(SeccompFilter.availability());
    ExecResult r =
        runner().exec("curl", List.of("-v", "--max-time", "5", "http://127.0.0.1:1/"), denyAll());
    ExecResult control =
        runner().exec("curl", List.of("-v", "--max-time", "5", "http://127.0.0.1:1/"), timeout());
    // Without the filter curl creates its socket and tries to connect (refused on port 1); with
    // it, socket() fails and curl never gets to "Trying".
    assertThat(control.stderrText()).contains("Trying 127.0.0.1");
    assertThat(r.exitCode()).isEqualTo(7);
    assertThat(r.stderrText()).doesNotContain("Trying").contains("Couldn't connect");
  }

  @Test
  void aChildCannotSignalTheJvm() {
    HostRequirements.require(Landlock.abi() >= 6, "signal scoping needs Landlock ABI 6");
    long jvm = ProcessHandle.current().pid();
    ExecResult r = sh("kill -0 $$ && echo self-ok; kill -0 " + jvm + " && echo jvm-reachable");
    assertThat(r.stdoutText()).isEqualTo("self-ok\n");
    assertThat(r.stderrText()).isNotEmpty();
  }

  @Test
  void allowListAndProxyNeedTheConnectSupervisorWithoutANamespace() {
    for (NetMode mode : List.of(NetMode.ALLOW_LIST, NetMode.PROXY)) {
      NetPolicy net =
          mode == NetMode.ALLOW_LIST
              ? NetPolicy.allowList()
              : NetPolicy.proxy("http://127.0.0.1:3128");
      ExecOptions opts = ExecOptions.builder().net(net).build();
      if (ConnectSupervisor.availability().isAvailable()) {
        try (ConfinedRunner r = runner()) {
          assertThat(r.exec("true", List.of(), opts).exitCode()).isZero();
        }
      } else {
        assertThatThrownBy(() -> runner().exec("true", List.of(), opts))
            .isInstanceOfSatisfying(
                SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE))
            .hasMessageContaining("net policy " + mode)
            .hasMessageContaining("needs the connect supervisor");
      }
    }
    // Caps are enforced (ConfinedCapsTest); the CPU throttle needs a cgroup cpu controller.
    if (!runner().enforcement().cpuThrottle()) {
      ExecOptions throttle =
          ExecOptions.builder()
              .resources(ResourceLimits.builder().cpuThrottleMillicores(100).build())
              .build();
      assertThatThrownBy(() -> runner().exec("true", List.of(), throttle))
          .isInstanceOfSatisfying(
              SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE));
    }
  }

  @Test
  void aMissingWritablePathIsAValidationError() {
    assertThatThrownBy(
            () ->
                ConfinedRunner.builder(root.toString())
                    .writablePaths(outside.resolve("missing").toString())
                    .build())
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION));
  }

  @Test
  void aWritablePathThatALinkInTheRootTakesOutsideIsRefused() throws IOException {
    // A child of an earlier run could have planted this link: naming it must not make its target
    // writable.
    Files.createSymbolicLink(root.resolve("link-out"), outside);
    Files.createDirectory(root.resolve("sub"));
    Files.createSymbolicLink(root.resolve("link-in"), root.resolve("sub"));
    Files.createSymbolicLink(writable.resolve("nested-out"), outside);
    for (String named :
        List.of(
            root.resolve("link-out").toString(),
            root.resolve("link-out/deeper/..").toString(),
            writable.resolve("nested-out").toString())) {
      assertThatThrownBy(
              () ->
                  ConfinedRunner.builder(root.toString())
                      .writablePaths(writable.toString(), named)
                      .build())
          .as(named)
          .isInstanceOfSatisfying(
              SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION))
          .hasMessageContaining("resolves to " + outside.toRealPath());
    }
    // Links that stay inside, and the target named itself, are fine and shown resolved.
    ConfinedRunner ok =
        ConfinedRunner.builder(root.toString())
            .writablePaths(root.resolve("link-in").toString(), outside.toString())
            .build();
    assertThat(ok.writablePaths())
        .containsExactly(
            root.resolve("sub").toRealPath().toString(), outside.toRealPath().toString());
    assertThat(ok.capabilities())
        .filteredOn(c -> c.dimension() == Dimension.FILESYSTEM_BOUNDS)
        .singleElement()
        .satisfies(c -> assertThat(c.detail()).contains(outside.toRealPath().toString()));
    ExecResult r = ok.exec("touch", List.of(outside.resolve("named").toString()), timeout());
    assertThat(r.exitCode()).as(r.stderrText()).isZero();
  }

  @Test
  void reportsEveryDimensionOnceInItsOrder() {
    assertThat(runner().capabilities())
        .extracting(Capability::dimension)
        .containsExactly(Dimension.values());
  }

  @Test
  void deviceDirectoriesCannotBeMadeWritable() {
    for (String dev : List.of("/dev", "/dev/pts", "/dev/shm/../pts")) {
      assertThatThrownBy(() -> ConfinedRunner.builder(root.toString()).writablePaths(dev).build())
          .as(dev)
          .isInstanceOfSatisfying(
              SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION))
          .hasMessageContaining("device directory");
    }
    assertThatThrownBy(() -> ConfinedRunner.builder("/dev").build())
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION));
    assertThat(ConfinedRunner.builder(root.toString()).writablePaths("/dev/shm").build())
        .isNotNull();
  }

  @Test
  void scratchDirectoriesOfDeadJvmsAreRemovedAtTheNextStart() throws IOException {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    // A pid that is not running: the highest the kernel can hand out, plus one.
    long dead = Long.parseLong(Files.readAllLines(Path.of("/proc/sys/kernel/pid_max")).get(0)) + 1;
    Path stale = Files.createDirectory(tmp.resolve("confine-scratch-" + dead + "-test"));
    Files.createDirectories(stale.resolve("exec-1/deep/er"));
    Files.writeString(stale.resolve("exec-1/deep/file"), "left");
    Files.createSymbolicLink(stale.resolve("exec-2"), outside); // must not be followed
    Files.writeString(outside.resolve("keep"), "keep");
    Path alive =
        Files.createDirectory(
            tmp.resolve("confine-scratch-" + ProcessHandle.current().pid() + "-test-alive"));
    try {
      ScratchDirectories.removeStale(tmp);
      assertThat(stale).doesNotExist();
      assertThat(outside.resolve("keep")).hasContent("keep");
      assertThat(alive).exists();
    } finally {
      Files.deleteIfExists(alive);
    }
  }
}
