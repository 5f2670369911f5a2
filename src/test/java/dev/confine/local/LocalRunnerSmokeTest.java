package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class LocalRunnerSmokeTest {
  @Test
  void echo() {
    LocalRunner r = LocalRunner.create("/tmp");
    ExecResult res = r.exec("echo", List.of("hello"), null);
    assertThat(res.stdoutText()).isEqualTo("hello\n");
    assertThat(res.exitCode()).isZero();
    ExecResult cat =
        r.exec(
            "cat",
            List.of(),
            ExecOptions.builder().stdin("abc".getBytes(StandardCharsets.UTF_8)).build());
    assertThat(cat.stdoutText()).isEqualTo("abc");
    ExecResult sh = r.exec("sh", List.of("-c", "echo err >&2; exit 3"), null);
    assertThat(sh.exitCode()).isEqualTo(3);
    assertThat(sh.stderrText()).isEqualTo("err\n");
  }
}
