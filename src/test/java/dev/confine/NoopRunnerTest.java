package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class NoopRunnerTest {
  @Test
  void succeedsWithNothingWhateverItIsAsked() {
    ExecResult r =
        new NoopRunner()
            .exec(
                "rm",
                List.of("-rf", "/"),
                ExecOptions.builder()
                    .timeout(Duration.ofMillis(1))
                    .net(NetPolicy.denyAll())
                    .stdin(new byte[] {1})
                    .build());
    assertThat(r.exitCode()).isZero();
    assertThat(r.signal()).isZero();
    assertThat(r.stdout()).isEmpty();
    assertThat(r.stderr()).isEmpty();
    assertThat(r.stdoutTruncated() || r.stderrTruncated()).isFalse();
  }

  @Test
  void enforcesNothingEvenWhenDecorated() {
    assertThat(Enforcement.of(new NoopRunner())).isEqualTo(Enforcement.NONE);
    assertThat(Enforcement.of(Runners.withDefaults(new NoopRunner(), null)))
        .isEqualTo(Enforcement.NONE);
    assertThat(Enforcement.of(null)).isEqualTo(Enforcement.NONE);
    Runner nonReporting = (c, a, o) -> ExecResult.ofExit(0);
    assertThat(Enforcement.of(nonReporting)).isEqualTo(Enforcement.NONE);
  }
}
