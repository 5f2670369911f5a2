package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.CapsMechanism;
import dev.confine.Enforcement;
import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.PathTraversalException;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.testing.Thrown;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalRunnerTest {
  @TempDir Path root;

  private LocalRunner runner() {
    return LocalRunner.create(root.toString());
  }

  private static ExecOptions.Builder opts() {
    return ExecOptions.builder();
  }

  @Test
  void reportsEveryDimensionItKnowsOnce() {
    assertThat(runner().capabilities())
        .extracting(Capability::dimension)
        .containsExactlyInAnyOrder(
            Dimension.SPAWN,
            Dimension.ENV,
            Dimension.NET_DENY_ALL,
            Dimension.NET_ALLOW_LIST,
            Dimension.NET_PROXY,
            Dimension.MEMORY,
            Dimension.CPU,
            Dimension.CPU_THROTTLE,
            Dimension.PIDS,
            Dimension.TREE_KILL,
            Dimension.DISK,
            Dimension.FILESYSTEM_BOUNDS);
  }

  @Test
  void runsAProgramAndCapturesBothStreams() {
    ExecResult r = runner().exec("sh", List.of("-c", "echo out; echo err >&2"), null);
    assertThat(r.exitCode()).isZero();
    assertThat(r.signal()).isZero();
    assertThat(r.stdoutText()).isEqualTo("out\n");
    assertThat(r.stderrText()).isEqualTo("err\n");
    assertThat(r.wallTime()).isPositive();
    assertThat(r.leftoversKilled()).isFalse();
  }

  @Test
  void aNonZeroExitIsAResultNotAnError() {
    ExecResult r = runner().exec("sh", List.of("-c", "exit 42"), null);
    assertThat(r.exitCode()).isEqualTo(42);
    assertThat(r.signaled()).isFalse();
  }

  @Test
  void aSignalTheRunnerDidNotSendIsExitMinusOneWithTheSignal() {
    ExecResult r = runner().exec("sh", List.of("-c", "kill -TERM $$"), null);
    assertThat(r.exitCode()).isEqualTo(-1);
    assertThat(r.signal()).isEqualTo(15);
  }

  @Test
  void argvReachesTheProgramVerbatimWithoutAShell() {
    ExecResult r =
        runner().exec("sh", List.of("-c", "printf '%s|' \"$0\" \"$@\"", "a b", "$HOME", "*"), null);
    assertThat(r.stdoutText()).isEqualTo("a b|$HOME|*|");
    ExecResult zero = runner().exec("sh", List.of("-c", "printf %s \"$0\""), null);
    assertThat(zero.stdoutText()).isEqualTo("sh");
  }

  @Test
  void binaryOutputAndInvalidUtf8Survive() {
    ExecResult r = runner().exec("printf", List.of("\\377\\376\\000abc\\200"), null);
    assertThat(r.stdout()).containsExactly(0xff, 0xfe, 0x00, 'a', 'b', 'c', 0x80);
    assertThat(r.stdoutText()).isEqualTo("\ufffd\ufffd\u0000abc\ufffd");
  }

  @Test
  void stdinNullMeansEndOfFileEmptyMeansAnEmptyPipeAndBytesArePiped() {
    assertThat(runner().exec("cat", List.of(), null).stdout()).isEmpty();
    assertThat(runner().exec("cat", List.of(), opts().stdin(new byte[0]).build()).stdout())
        .isEmpty();
    ExecResult r = runner().exec("cat", List.of(), opts().stdin(new byte[] {0, 1, 2, -1}).build());
    assertThat(r.stdout()).containsExactly(0, 1, 2, 0xff);
    ExecResult tty =
        runner().exec("sh", List.of("-c", "test -p /dev/stdin && echo pipe || echo other"), null);
    assertThat(tty.stdoutText()).isEqualTo("other\n");
  }

  @Test
  void largeStdinAndOutputFlowAtTheSameTime() {
    byte[] big = new byte[4 << 20];
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) (i * 31);
    }
    ExecResult r = runner().exec("cat", List.of(), opts().stdin(big).build());
    assertThat(r.stdoutTruncated()).isFalse();
    assertThat(r.stdout()).isEqualTo(big);
  }

  @Test
  void aChildThatIgnoresItsStdinStillFinishes() {
    byte[] big = new byte[1 << 20];
    ExecResult r = runner().exec("true", List.of(), opts().stdin(big).build());
    assertThat(r.exitCode()).isZero();
  }

  @Test
  void outputIsCappedPerStreamKeepingTheFirstBytesAndTheChildRunsOn() {
    ExecOptions capped =
        opts().resources(ResourceLimits.builder().maxOutputBytes(10).build()).build();
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of("-c", "head -c 100000 /dev/zero | tr '\\0' a; echo short >&2; exit 7"),
                capped);
    assertThat(r.exitCode()).isEqualTo(7);
    assertThat(r.stdoutText()).isEqualTo("aaaaaaaaaa");
    assertThat(r.stdoutTruncated()).isTrue();
    assertThat(r.stderrText()).isEqualTo("short\n");
    assertThat(r.stderrTruncated()).isFalse();
  }

  @Test
  void runnerDefaultCapAppliesWhenTheCallSetsNone() {
    LocalRunner small = LocalRunner.builder(root.toString()).maxOutputBytes(4).build();
    ExecResult r = small.exec("echo", List.of("123456"), null);
    assertThat(r.stdoutText()).isEqualTo("1234");
    assertThat(r.stdoutTruncated()).isTrue();

    LocalRunner unlimited = LocalRunner.builder(root.toString()).maxOutputBytes(0).build();
    ExecResult big = unlimited.exec("head", List.of("-c", "12000000", "/dev/zero"), null);
    assertThat(big.stdoutLength()).isEqualTo(12_000_000);
    assertThat(big.stdoutTruncated()).isFalse();

    ExecResult dflt = runner().exec("head", List.of("-c", "11000000", "/dev/zero"), null);
    assertThat(dflt.stdoutLength()).isEqualTo(10 << 20);
    assertThat(dflt.stdoutTruncated()).isTrue();
  }

  private LocalRunner withHostEnv(Map<String, String> host) {
    return LocalRunner.builder(root.toString()).hostEnvironment(() -> host).build();
  }

  private static Map<String, String> hostEnv() {
    Map<String, String> host = new LinkedHashMap<>();
    host.put("PATH", "/usr/bin:/bin");
    host.put("SECRET", "s3cr3t");
    host.put("HOME", "/home/x");
    return host;
  }

  @Test
  void nullAllowListInheritsTheWholeHostEnvironment() {
    ExecResult r = withHostEnv(hostEnv()).exec("env", List.of(), null);
    assertThat(r.stdoutText().lines())
        .containsExactlyInAnyOrder("PATH=/usr/bin:/bin", "SECRET=s3cr3t", "HOME=/home/x");
  }

  @Test
  void emptyAllowListGivesAnEmptyEnvironmentAndTheProgramIsStillFound() {
    ExecResult r =
        withHostEnv(hostEnv()).exec("env", List.of(), opts().env(EnvPolicy.none()).build());
    assertThat(r.exitCode()).isZero();
    assertThat(r.stdoutText()).isEmpty();
  }

  @Test
  void allowListForwardsOnlyNamedVariablesAndInjectOverrides() {
    Map<String, String> inject = new LinkedHashMap<>();
    inject.put("HOME", "/sandbox");
    inject.put("NEW", "1");
    ExecResult r =
        withHostEnv(hostEnv())
            .exec(
                "env",
                List.of(),
                opts().env(EnvPolicy.allow("PATH", "HOME", "ABSENT").withInject(inject)).build());
    assertThat(r.stdoutText().lines())
        .containsExactly("PATH=/usr/bin:/bin", "HOME=/sandbox", "NEW=1");
  }

  @Test
  void theRealHostEnvironmentNeverLeaksPastTheAllowList() {
    ExecResult r = runner().exec("env", List.of(), opts().env(EnvPolicy.allow("PATH")).build());
    assertThat(r.stdoutText().lines()).allMatch(l -> l.startsWith("PATH="));
  }

  @Test
  void workDirIsTheRootByDefaultAndRelativeDirsAreBeneathIt() throws IOException {
    Files.createDirectories(root.resolve("sub/dir"));
    assertThat(runner().exec("pwd", List.of("-P"), null).stdoutText())
        .isEqualTo(root.toRealPath() + "\n");
    assertThat(runner().exec("pwd", List.of("-P"), opts().workDir("sub/dir").build()).stdoutText())
        .isEqualTo(root.toRealPath().resolve("sub/dir") + "\n");
  }

  @Test
  void workDirEscapesAreForbidden() throws IOException {
    Path outside = Files.createTempDirectory("confine-outside");
    try {
      Files.createSymbolicLink(root.resolve("out"), outside);
      for (String wd : List.of("../../../tmp", "/tmp", "out", "out/newdir")) {
        SandboxException e =
            Thrown.sandbox(() -> runner().exec("true", List.of(), opts().workDir(wd).build()));
        assertThat(e).isInstanceOf(PathTraversalException.class);
        assertThat(e.kind()).isEqualTo(Kind.FORBIDDEN);
      }
    } finally {
      Files.delete(root.resolve("out"));
      Files.delete(outside);
    }
  }

  @Test
  void aMissingWorkDirInsideTheRootFailsAtSpawnAsInternal() {
    SandboxException e =
        Thrown.sandbox(() -> runner().exec("true", List.of(), opts().workDir("missing").build()));
    assertThat(e.kind()).isEqualTo(Kind.INTERNAL);
    assertThat(e.getMessage()).contains("chdir").contains("no such file");
    assertThat(e.partialResult()).isEmpty();
  }

  @Test
  void executableLookupIsClassifiedExactly() throws IOException {
    assertThat(Thrown.sandbox(() -> runner().exec("no-such-program-xyz", List.of(), null)).kind())
        .isEqualTo(Kind.NOT_FOUND);
    assertThat(Thrown.sandbox(() -> runner().exec("/no/such/bin", List.of(), null)).kind())
        .isEqualTo(Kind.NOT_FOUND);
    Path plain = Files.writeString(root.resolve("plain.sh"), "#!/bin/sh\necho hi\n");
    Files.setPosixFilePermissions(plain, PosixFilePermissions.fromString("rw-r--r--"));
    if (!isRoot()) {
      assertThat(Thrown.sandbox(() -> runner().exec(plain.toString(), List.of(), null)).kind())
          .isEqualTo(Kind.FORBIDDEN);
    }
    assertThat(Thrown.sandbox(() -> runner().exec("/tmp", List.of(), null)).kind())
        .isEqualTo(Kind.FORBIDDEN);
    Files.setPosixFilePermissions(plain, PosixFilePermissions.fromString("rwxr-xr-x"));
    assertThat(runner().exec("./plain.sh", List.of(), null).stdoutText()).isEqualTo("hi\n");
  }

  @Test
  void nonExecutableFileIsForbiddenEvenForRoot() throws IOException {
    // access(X_OK) succeeds for root when any execute bit is set; with none it fails for root too.
    Path plain = Files.writeString(root.resolve("data.txt"), "not a program\n");
    Files.setPosixFilePermissions(plain, PosixFilePermissions.fromString("rw-rw-rw-"));
    SandboxException e = Thrown.sandbox(() -> runner().exec(plain.toString(), List.of(), null));
    assertThat(e.kind()).isEqualTo(Kind.FORBIDDEN);
    assertThat(e.getMessage()).contains("permission denied");
  }

  private static boolean isRoot() {
    try {
      return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
    } catch (IOException e) {
      return false;
    }
  }

  private LocalRunner withoutCaps() {
    return LocalRunner.builder(root.toString()).caps(CapsMechanism.NONE).build();
  }

  @Test
  void policiesThisRunnerCannotEnforceAreNotAvailableBeforeAnythingRuns() {
    ExecOptions net = opts().net(NetPolicy.denyAll()).workDir("/etc").build();
    SandboxException n = Thrown.sandbox(() -> runner().exec("true", List.of(), net));
    assertThat(n.kind()).isEqualTo(Kind.NOT_AVAILABLE);
    assertThat(n.getMessage()).contains("net policy");

    for (ResourceLimits caps :
        List.of(
            ResourceLimits.builder().diskBytes(1).build(),
            ResourceLimits.builder().memoryBytes(1 << 20).build(),
            ResourceLimits.builder().maxProcesses(4).build(),
            ResourceLimits.builder().cpuMillicores(100).build())) {
      SandboxException e =
          Thrown.sandbox(
              () ->
                  withoutCaps()
                      .exec(
                          "true",
                          List.of(),
                          opts().resources(caps).timeout(Duration.ofSeconds(1)).build()));
      assertThat(e.kind()).as(caps.toString()).isEqualTo(Kind.NOT_AVAILABLE);
    }
    assertThat(
            Thrown.sandbox(
                    () ->
                        runner()
                            .exec(
                                "true",
                                List.of(),
                                opts()
                                    .resources(ResourceLimits.builder().cpuMillicores(5).build())
                                    .build()))
                .getMessage())
        .contains("timeout");
  }

  @Test
  void withoutCapsReportsOnlyTheEnvAllowList() {
    assertThat(withoutCaps().enforcement())
        .isEqualTo(Enforcement.builder().envAllowList(true).build());
  }

  @Test
  void aDiskQuotaIsNotAvailableWhateverTheCaps() {
    SandboxException e =
        Thrown.sandbox(
            () ->
                runner()
                    .exec(
                        "true",
                        List.of(),
                        opts().resources(ResourceLimits.builder().diskBytes(1).build()).build()));
    assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE);
    assertThat(e.getMessage()).contains("disk");
  }

  @Test
  void anEmptyRootIsAValidationError() {
    assertThat(Thrown.sandbox(() -> LocalRunner.create("")).kind()).isEqualTo(Kind.VALIDATION);
  }

  @Test
  void outputWrittenBeforeTheProgramExitsIsComplete() {
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of("-c", "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done"),
                null);
    assertThat(r.stdoutText().lines()).hasSize(2000).endsWith("line1999");
  }

  @Test
  void stdinBytesAreCopiedSoLaterChangesDoNotMatter() {
    byte[] in = "abc".getBytes(StandardCharsets.UTF_8);
    ExecOptions o = opts().stdin(in).build();
    in[0] = 'X';
    assertThat(runner().exec("cat", List.of(), o).stdoutText()).isEqualTo("abc");
  }
}
