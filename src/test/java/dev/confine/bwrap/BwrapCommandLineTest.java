package dev.confine.bwrap;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line a {@link BwrapRunner} starts its binary with, exactly (recorded by {@link
 * FakeBwrap}), and the fake itself.
 */
class BwrapCommandLineTest {
  @TempDir Path temp;

  @Test
  void theRunnerStartsBwrapWithExactlyTheCommandLineItBuilt() throws IOException {
    Path base = temp.toRealPath();
    Path root = Files.createDirectory(base.resolve("root"));
    Path cache = Files.createDirectory(base.resolve("cache"));
    FakeBwrap fake = FakeBwrap.create(base, 3, "from the fake\n");
    Files.createDirectory(root.resolve("sub"));
    Map<String, String> host = new LinkedHashMap<>();
    host.put("HOME", "/home/u");
    host.put("ODD", "two\nlines and 'quotes' \"too\"");
    BwrapRunner runner =
        BwrapRunner.builder(root.toString())
            .binary(fake.binary().toString())
            .writablePaths(cache.toString())
            .extraFlags("--level-prefix")
            .hostEnvironment(() -> host)
            .build();
    ExecOptions opts =
        ExecOptions.builder()
            .workDir("sub")
            .env(EnvPolicy.allow("HOME", "ODD").withInject(Map.of("EMPTY", "")))
            .net(NetPolicy.builder().mode(NetMode.DENY_ALL).build())
            .build();
    ExecResult r = runner.exec("printf", List.of("%s\\n", "", "--bind"), opts);
    assertThat(r.exitCode()).isEqualTo(3);
    assertThat(r.stdoutText()).isEqualTo("from the fake\n");

    // Seed §10.3 step 9: the extra flags, the policy's, the filesystem's, --, the command.
    assertThat(fake.recordedArgv())
        .containsExactly(
            "--level-prefix",
            "--die-with-parent",
            "--unshare-pid",
            "--chdir",
            root.resolve("sub").toString(),
            "--clearenv",
            "--setenv",
            "EMPTY",
            "",
            "--setenv",
            "HOME",
            "/home/u",
            "--setenv",
            "ODD",
            "two\nlines and 'quotes' \"too\"",
            "--unshare-net",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--tmpfs",
            "/tmp",
            "--bind",
            root.toString(),
            root.toString(),
            "--bind",
            cache.toString(),
            cache.toString(),
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/run",
            "--",
            "printf",
            "%s\\n",
            "",
            "--bind");
  }

  @Test
  void aFakeStartedWithoutArgumentsRecordsNone() throws IOException, InterruptedException {
    FakeBwrap fake = FakeBwrap.create(temp);
    assertThat(fake.wasStarted()).isFalse();
    assertThat(new ProcessBuilder(fake.binary().toString()).start().waitFor()).isZero();
    assertThat(fake.wasStarted()).isTrue();
    assertThat(fake.recordedArgv()).isEmpty();
  }
}
