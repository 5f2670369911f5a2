package dev.confine.seatbelt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.Enforcement;
import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The runner off macOS as this host is (build refused), and, with the host's name given as macOS,
 * the seed's construction rules and a runner that still runs nothing. No test runs sandbox-exec:
 * none is here, and the runner has no exec path.
 */
class SeatbeltRunnerTest {
  @TempDir Path tmp;
  private Path root;
  private Path bin;
  private Path sandboxExec;

  @BeforeEach
  void setUp() throws IOException {
    root = Files.createDirectory(tmp.resolve("root"));
    bin = Files.createDirectory(tmp.resolve("bin"));
    sandboxExec = executable(bin.resolve("sandbox-exec"));
  }

  private static Path executable(Path file) throws IOException {
    Files.writeString(file, "#!/bin/sh\nexit 1\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    return file;
  }

  /** A builder on a host named as macOS whose PATH holds the fake sandbox-exec. */
  private SeatbeltRunner.Builder onMac(String rootDir) {
    return SeatbeltRunner.builder(rootDir)
        .osName("Mac OS X")
        .hostEnvironment(() -> Map.of("PATH", bin.toString(), "HOME", "/Users/me"));
  }

  private static Consumer<SandboxException> kind(Kind kind) {
    return e -> assertThat(e.kind()).isEqualTo(kind);
  }

  // ---- this host ----

  @Test
  void offMacOsBuildingIsNotAvailableWithTheReason() {
    String os = System.getProperty("os.name");
    assertThat(SeatbeltRunner.hostUnavailability(os)).as("these tests run off macOS").isPresent();
    assertThatThrownBy(() -> SeatbeltRunner.builder(root.toString()).build())
        .isInstanceOfSatisfying(SandboxException.class, kind(Kind.NOT_AVAILABLE))
        .hasMessage(
            "sandbox: the seatbelt backend requires macOS (sandbox-exec); this host is " + os);
  }

  @Test
  void offMacOsNothingElseIsLookedAt() {
    // A root that does not exist and no sandbox-exec anywhere: the host is refused first.
    assertThatThrownBy(
            () ->
                SeatbeltRunner.builder(tmp.resolve("missing").toString())
                    .osName("Linux")
                    .binary("/nonexistent/sandbox-exec")
                    .writablePaths("")
                    .build())
        .isInstanceOfSatisfying(SandboxException.class, kind(Kind.NOT_AVAILABLE))
        .hasMessage(
            "sandbox: the seatbelt backend requires macOS (sandbox-exec); this host is Linux");
  }

  @Test
  void macOsIsTheOnlyHost() {
    assertThat(SeatbeltRunner.hostUnavailability("Mac OS X")).isEmpty();
    assertThat(SeatbeltRunner.hostUnavailability("Darwin")).isEmpty();
    assertThat(SeatbeltRunner.hostUnavailability("Linux"))
        .contains("the seatbelt backend requires macOS (sandbox-exec); this host is Linux");
    assertThat(SeatbeltRunner.hostUnavailability("Windows 11"))
        .get()
        .asString()
        .endsWith("Windows 11");
    assertThat(SeatbeltRunner.hostUnavailability("FreeBSD")).isPresent();
    assertThat(SeatbeltRunner.hostUnavailability("")).isPresent();
    assertThat(SeatbeltRunner.hostUnavailability(null)).isPresent();
  }

  /**
   * The seed's non-darwin stub, a runner that exists off macOS: everything refused, nothing
   * claimed.
   */
  @Test
  void offMacOsTheReportIsAllFalseWithTheReason() {
    String reason = SeatbeltRunner.hostUnavailability("Linux").orElseThrow();
    SeatbeltRunner stub =
        new SeatbeltRunner(root, List.of(root.toString()), "sandbox-exec", Map::of, reason);
    assertRunsNothing(stub, reason);
  }

  // ---- on macOS: construction ----

  @Test
  void onMacOsTheRunnerIsBuiltFromTheRootAndTheWritablePaths() throws IOException {
    Path cache = Files.createDirectory(tmp.resolve("cache"));
    Path other = Files.createDirectory(tmp.resolve("other"));
    Path link = Files.createSymbolicLink(tmp.resolve("link"), other);

    SeatbeltRunner r =
        onMac(root.toString())
            .writablePaths(cache.toString(), root.toString(), link.toString(), other + "/.")
            .writablePaths(cache.toString())
            .build();

    assertThat(r.root()).isEqualTo(root.toRealPath());
    assertThat(r.binary()).isEqualTo(sandboxExec.toString());
    // [root, extras...] resolved and deduplicated, order kept: the root once, first.
    assertThat(r.profileWritable())
        .containsExactly(
            root.toRealPath().toString(),
            cache.toRealPath().toString(),
            other.toRealPath().toString());
    assertThat(r.writablePaths())
        .containsExactly(cache.toRealPath().toString(), other.toRealPath().toString());
    assertThat(r.toString()).contains(r.root().toString());
  }

  @Test
  void aRelativeRootIsMadeAbsolute() {
    SeatbeltRunner r = onMac(".").build();
    assertThat(r.root()).isAbsolute();
  }

  @Test
  void theRootMustExist() {
    Path missing = tmp.resolve("missing");
    assertThatThrownBy(() -> onMac(missing.toString()).build())
        .isInstanceOfSatisfying(SandboxException.class, kind(Kind.VALIDATION))
        .hasMessageStartingWith("sandbox: seatbelt: path \"" + missing + "\" must exist");
  }

  @Test
  void eachWritablePathMustExist() {
    Path missing = tmp.resolve("nope");
    assertThatThrownBy(() -> onMac(root.toString()).writablePaths(missing.toString()).build())
        .isInstanceOfSatisfying(SandboxException.class, kind(Kind.VALIDATION))
        .hasMessageStartingWith("sandbox: seatbelt: path \"" + missing + "\" must exist");
  }

  @Test
  void emptyRootsAndPathsAreValidationErrors() {
    for (String rootDir : new String[] {"", null}) {
      assertThatThrownBy(() -> onMac(rootDir).build())
          .isInstanceOfSatisfying(SandboxException.class, kind(Kind.VALIDATION))
          .hasMessage("sandbox: seatbelt runner root must be set");
    }
    assertThatThrownBy(() -> onMac(root.toString()).writablePaths("").build())
        .isInstanceOfSatisfying(SandboxException.class, kind(Kind.VALIDATION))
        .hasMessage("sandbox: seatbelt: empty writable path");
  }

  @Test
  void theBinaryIsCheckedBeforeThePaths() {
    assertThatThrownBy(
            () ->
                onMac(tmp.resolve("missing").toString())
                    .binary(tmp.resolve("no-such").toString())
                    .build())
        .isInstanceOfSatisfying(SandboxException.class, kind(Kind.NOT_AVAILABLE))
        .hasMessageContaining("not executable");
  }

  @Test
  void withoutSandboxExecOnThePathTheRunnerIsNotAvailable() throws IOException {
    Path empty = Files.createDirectory(tmp.resolve("empty"));
    for (Map<String, String> env :
        List.of(
            Map.of("PATH", empty.toString()),
            Map.<String, String>of(),
            // relative and empty entries are never searched, as Go's LookPath refuses them
            Map.of("PATH", ":.:" + tmp.relativize(bin)))) {
      assertThatThrownBy(
              () ->
                  SeatbeltRunner.builder(root.toString())
                      .osName("Mac OS X")
                      .hostEnvironment(() -> env)
                      .build())
          .isInstanceOfSatisfying(SandboxException.class, kind(Kind.NOT_AVAILABLE))
          .hasMessageContaining("sandbox-exec not found on PATH");
    }
  }

  @Test
  void theFirstPathDirectoryHoldingAnExecutableWins() throws IOException {
    Path first = Files.createDirectory(tmp.resolve("first"));
    Files.writeString(first.resolve("sandbox-exec"), "not executable");
    Path second = Files.createDirectory(tmp.resolve("second"));
    Files.createDirectory(second.resolve("sandbox-exec"));
    String path = first + ":" + second + ":" + bin + "/";
    SeatbeltRunner r =
        SeatbeltRunner.builder(root.toString())
            .osName("Mac OS X")
            .hostEnvironment(() -> Map.of("PATH", path))
            .build();
    assertThat(r.binary()).isEqualTo(bin + "/sandbox-exec");
  }

  @Test
  void aGivenBinaryIsAnExecutableFileOrANameOnThePath() throws IOException {
    Path custom = executable(tmp.resolve("my-sandbox-exec"));
    assertThat(onMac(root.toString()).binary(custom.toString()).build().binary())
        .isEqualTo(custom.toString());
    assertThat(onMac(root.toString()).binary("sandbox-exec").build().binary())
        .isEqualTo(sandboxExec.toString());

    Path plain = Files.writeString(tmp.resolve("plain"), "x");
    for (String bad : List.of(plain.toString(), bin.toString())) {
      assertThatThrownBy(() -> onMac(root.toString()).binary(bad).build())
          .isInstanceOfSatisfying(SandboxException.class, kind(Kind.NOT_AVAILABLE))
          .hasMessage("sandbox: seatbelt: binary \"" + bad + "\" not executable");
    }
    assertThatThrownBy(() -> onMac(root.toString()).binary("no-such-tool").build())
        .isInstanceOfSatisfying(SandboxException.class, kind(Kind.NOT_AVAILABLE))
        .hasMessageContaining("not found on PATH");
  }

  // ---- on macOS: still nothing runs ----

  @Test
  void onMacOsTheRunnerStillRunsNothingAndSaysWhy() {
    SeatbeltRunner r = onMac(root.toString()).build();
    assertThat(r.unavailability()).isEqualTo(SeatbeltRunner.NO_ENGINE);
    assertRunsNothing(r, SeatbeltRunner.NO_ENGINE);
  }

  @Test
  void theCommandLineIsSandboxExecWithTheRunnersProfile() throws IOException {
    Path cache = Files.createDirectory(tmp.resolve("cache"));
    SeatbeltRunner r = onMac(root.toString()).writablePaths(cache.toString()).build();

    List<String> argv = r.commandLine("make", List.of("-j4"), NetMode.PROXY, 5000);

    assertThat(argv)
        .containsExactly(
            sandboxExec.toString(),
            "-p",
            SeatbeltProfile.of(
                List.of(root.toRealPath().toString(), cache.toRealPath().toString()),
                NetMode.PROXY,
                5000),
            "make",
            "-j4");
    assertThat(argv.get(2))
        .contains("(allow file-write* (subpath \"" + root.toRealPath() + "\"))")
        .contains("(allow network-outbound (remote ip \"localhost:5000\"))");
  }

  @Test
  void theEnvironmentComesFromTheRunnersHost() {
    SeatbeltRunner r = onMac(root.toString()).build();
    assertThat(r.environment(EnvPolicy.allow("HOME"), 0, null)).containsExactly("HOME=/Users/me");
    assertThat(r.environment(EnvPolicy.allow("HOME"), 7, null))
        .contains("HOME=/Users/me", "all_proxy=http://127.0.0.1:7", "no_proxy=");
  }

  private static void assertRunsNothing(SeatbeltRunner r, String reason) {
    assertThat(r.enforcement()).isEqualTo(Enforcement.NONE);
    assertThat(Enforcement.of(r)).isEqualTo(Enforcement.NONE);
    for (NetMode mode : List.of(NetMode.DENY_ALL, NetMode.ALLOW_LIST, NetMode.PROXY)) {
      assertThat(r.enforcement().enforces(mode)).isFalse();
    }
    assertThat(r.capabilities())
        .extracting(Capability::dimension)
        .containsExactly(Dimension.values());
    assertThat(r.capabilities())
        .allSatisfy(
            c -> {
              assertThat(c.enforced()).isFalse();
              assertThat(c.detail()).isEqualTo(reason);
            });
    assertThat(Capability.rowsOf(r)).isEqualTo(r.capabilities());

    String message = "sandbox: " + reason;
    List<ThrowingCallable> calls =
        List.of(
            () -> r.exec("true", List.of(), null),
            () -> r.exec("true", null, ExecOptions.builder().net(NetPolicy.denyAll()).build()),
            () -> r.exec("", null, null),
            () -> r.start(ProcessSpec.pipes(List.of("sh"))),
            r::list,
            () -> r.terminate("p1"));
    for (ThrowingCallable call : calls) {
      assertThatThrownBy(call)
          .isInstanceOfSatisfying(
              SandboxException.class,
              e -> {
                assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE);
                assertThat(e.partialResult()).isEmpty();
              })
          .hasMessage(message);
    }
    // Sessions are found as for the other backends, and refused the same way.
    assertThat(ProcessManager.of(r)).containsSame(r);
  }

  @ParameterizedTest
  @ValueSource(strings = {"Mac OS X", "macOS", "Darwin"})
  void macOsByAnyOfItsNames(String os) throws IOException {
    assertThat(
            SeatbeltRunner.builder(root.toString())
                .osName(os)
                .binary(sandboxExec.toString())
                .build()
                .root())
        .isEqualTo(root.toRealPath());
  }
}
