package dev.confine.bwrap;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The assembled command line reaches a binary exactly as built: the settings' binary (found on a
 * PATH) started with {@link BwrapFlags#commandLine}, recorded by {@link FakeBwrap}.
 */
class BwrapCommandLineTest {
  @TempDir Path temp;

  @Test
  void theFakeRecordsTheWholeCommandLineVerbatim() throws IOException, InterruptedException {
    Path base = temp.toRealPath();
    Path root = Files.createDirectory(base.resolve("root"));
    Path cache = Files.createDirectory(base.resolve("cache"));
    FakeBwrap fake = FakeBwrap.create(base, 3, "from the fake\n");
    BwrapSettings s =
        BwrapSettings.resolve(
            root.toString(),
            null,
            List.of(cache.toString()),
            List.of("--level-prefix"),
            fake.dir().toString());
    Map<String, String> host = new LinkedHashMap<>();
    host.put("HOME", "/home/u");
    host.put("ODD", "two\nlines and 'quotes' \"too\"");
    ExecOptions opts =
        ExecOptions.builder()
            .workDir(root.resolve("sub").toString())
            .env(EnvPolicy.allow("HOME", "ODD").withInject(Map.of("EMPTY", "")))
            .net(NetPolicy.builder().mode(NetMode.DENY_ALL).build())
            .build();
    List<String> policy = new ArrayList<>(BwrapFlags.buildFlags(opts, host));
    policy.addAll(BwrapFlags.hardeningFlags());
    List<String> fs =
        new ArrayList<>(BwrapFlags.filesystemFlags(s.root().toString(), s.writablePaths()));
    fs.addAll(BwrapFlags.netIsolationFlags(NetMode.DENY_ALL));
    List<String> argv =
        BwrapFlags.commandLine(
            s.extraFlags(), policy, fs, List.of("printf", "%s\\n", "", "--bind"));

    List<String> cmd = new ArrayList<>();
    cmd.add(s.binary().toString());
    cmd.addAll(argv);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor()).isEqualTo(3);
    assertThat(out).isEqualTo("from the fake\n");

    assertThat(fake.recordedArgv())
        .isEqualTo(argv)
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
