package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.confined.ConfinedRunner;
import dev.confine.host.HostExec;
import dev.confine.linux.confinement.Landlock;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.Thrown;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An output cap the JVM cannot hold is refused before anything runs, whether the call or the
 * runner's default asks for it, on every runner that runs host processes (HostExec is shared).
 */
@Tag("confinement")
class OutputCapLimitTest {
  private static final long HUGE = 1L << 40; // 1 TiB: more than any heap here

  @TempDir Path root;

  enum Backend {
    LOCAL,
    CONFINED
  }

  static Stream<Backend> backends() {
    return Stream.of(Backend.values());
  }

  private Runner runner(Backend backend, long defaultCap) {
    return switch (backend) {
      case LOCAL -> {
        LocalRunner.Builder b = LocalRunner.builder(root.toString());
        yield defaultCap == 0 ? b.build() : b.maxOutputBytes(defaultCap).build();
      }
      case CONFINED -> {
        HostRequirements.require(Landlock.availability());
        ConfinedRunner.Builder b = ConfinedRunner.builder(root.toString()).rootless(true);
        yield defaultCap == 0 ? b.build() : b.maxOutputBytes(defaultCap).build();
      }
    };
  }

  private static SandboxException refused(Runner runner, ExecOptions options) {
    return Thrown.sandbox(() -> runner.exec("touch", List.of("ran"), options));
  }

  @ParameterizedTest
  @MethodSource("backends")
  void aCallsCapAboveWhatTheJvmCanCaptureIsValidationNamingTheLimit(Backend backend) {
    SandboxException e =
        refused(
            runner(backend, 0),
            ExecOptions.builder()
                .resources(ResourceLimits.builder().maxOutputBytes(HUGE).build())
                .build());
    assertThat(e.kind()).isEqualTo(Kind.VALIDATION);
    assertThat(e.getMessage())
        .startsWith("sandbox: exec touch: maxOutputBytes " + HUGE)
        .contains("at most " + limit() + " bytes")
        .doesNotContain("\n");
    assertThat(root.resolve("ran")).doesNotExist();
  }

  @ParameterizedTest
  @MethodSource("backends")
  void aRunnerDefaultAboveWhatTheJvmCanCaptureIsRefusedTheSameWay(Backend backend) {
    SandboxException e = refused(runner(backend, HUGE), null);
    assertThat(e.kind()).isEqualTo(Kind.VALIDATION);
    assertThat(e.getMessage()).contains("maxOutputBytes " + HUGE).contains("at most " + limit());
    assertThat(root.resolve("ran")).doesNotExist();
  }

  @ParameterizedTest
  @MethodSource("backends")
  void aCapAtTheLimitRuns(Backend backend) {
    ExecResult r =
        runner(backend, 0)
            .exec(
                "echo",
                List.of("hi"),
                ExecOptions.builder()
                    .resources(ResourceLimits.builder().maxOutputBytes(limit()).build())
                    .build());
    assertThat(r.stdoutText()).isEqualTo("hi\n");
  }

  @Test
  void aDefaultNobodyChoseIsLoweredToTheLimitAndAnythingElseAboveItIsRefused() {
    long limit = limit();
    assertThat(HostExec.captureCap("x", Long.MAX_VALUE, false)).isEqualTo(limit);
    assertThat(HostExec.captureCap("x", HostExec.DEFAULT_MAX_OUTPUT_BYTES, false))
        .isEqualTo(Math.min(HostExec.DEFAULT_MAX_OUTPUT_BYTES, limit));
    assertThat(HostExec.captureCap("x", limit, true)).isEqualTo(limit);
    assertThat(HostExec.captureCap("x", 5, true)).isEqualTo(5);
    for (boolean fromCall : new boolean[] {true, false}) {
      try {
        HostExec.captureCap("x", limit + 1, fromCall);
        throw new AssertionError("expected a refusal");
      } catch (SandboxException e) {
        assertThat(e.kind()).isEqualTo(Kind.VALIDATION);
      }
    }
  }

  @Test
  void theLimitIsAnEighthOfTheHeapAndAJavaArrayAtMost() {
    assertThat(limit())
        .isEqualTo(Math.min(Integer.MAX_VALUE - 8, Runtime.getRuntime().maxMemory() / 8));
  }

  private static long limit() {
    return Math.min(Integer.MAX_VALUE - 8, Runtime.getRuntime().maxMemory() / 8);
  }
}
