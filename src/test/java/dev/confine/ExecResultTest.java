package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ExecResultTest {

  @Test
  void nullComponentsTakeTheirDefaults() {
    ExecResult r = new ExecResult(0, 0, null, null, false, false, null, null, false);

    assertThat(r.stdout()).isNotNull().isEmpty();
    assertThat(r.stderr()).isNotNull().isEmpty();
    assertThat(r.wallTime()).isEqualTo(Duration.ZERO);
    assertThat(r.usage()).isSameAs(ResourceUsage.NOT_MEASURED);
    assertThat(r.stdoutText()).isEmpty();
    assertThat(r).isEqualTo(ExecResult.ofExit(0));
  }

  @Test
  void theChildTimeIsAComponentOfItsOwnAndZeroWhenNotGiven() {
    ExecResult old =
        new ExecResult(0, 0, null, null, false, false, Duration.ofSeconds(2), null, false);
    ExecResult r = old.toBuilder().childTime(Duration.ofMillis(9)).build();

    assertThat(old.childTime()).isEqualTo(Duration.ZERO);
    assertThat(r.childTime()).isEqualTo(Duration.ofMillis(9));
    assertThat(r.wallTime()).isEqualTo(Duration.ofSeconds(2));
    assertThat(r).isNotEqualTo(old);
    assertThat(r.toBuilder().build()).isEqualTo(r).hasSameHashCodeAs(r);
    assertThat(r.toString()).contains("childTime=PT0.009S");
    assertThat(new ExecResult(0, 0, null, null, false, false, null, null, false, null).childTime())
        .isEqualTo(Duration.ZERO);
  }

  @Test
  void builderDefaultsToExitZeroWithNothing() {
    ExecResult r = ExecResult.builder().build();

    assertThat(r.exitCode()).isZero();
    assertThat(r.signal()).isZero();
    assertThat(r.signaled()).isFalse();
    assertThat(r.stdoutLength()).isZero();
    assertThat(r.stderrLength()).isZero();
    assertThat(r.stdoutTruncated()).isFalse();
    assertThat(r.stderrTruncated()).isFalse();
    assertThat(r.leftoversKilled()).isFalse();
    assertThat(r.usage()).isEqualTo(new ResourceUsage(-1, null, null, false));
  }

  @Test
  void ofExitAndOf() {
    ExecResult exit = ExecResult.ofExit(3);
    ExecResult out = ExecResult.of(2, "out ✓", "err");

    assertThat(exit.exitCode()).isEqualTo(3);
    assertThat(exit.stdoutLength()).isZero();
    assertThat(out.exitCode()).isEqualTo(2);
    assertThat(out.stdoutText()).isEqualTo("out ✓");
    assertThat(out.stdout()).isEqualTo("out ✓".getBytes(StandardCharsets.UTF_8));
    assertThat(out.stdoutLength()).isEqualTo(7);
    assertThat(out.stderrText()).isEqualTo("err");
  }

  @Test
  void nonZeroExitIsAResultWithNoSignal() {
    ExecResult r = ExecResult.ofExit(42);

    assertThat(r.exitCode()).isEqualTo(42);
    assertThat(r.signaled()).isFalse();
  }

  @Test
  void invalidUtf8IsReplacedInTextButKeptRawInBytes() {
    byte[] raw = {'a', (byte) 0xff, 'b', (byte) 0xc3};
    ExecResult r = ExecResult.builder().stdout(raw).stderr(raw).build();

    assertThat(r.stdoutText()).isEqualTo("a\uFFFDb\uFFFD");
    assertThat(r.stderrText()).isEqualTo("a\uFFFDb\uFFFD");
    assertThat(r.stdout()).containsExactly(raw);
    assertThat(r.stderr()).containsExactly(raw);
  }

  @Test
  void everyByteValueSurvives() {
    byte[] all = new byte[256];
    for (int i = 0; i < 256; i++) {
      all[i] = (byte) i;
    }
    ExecResult r = ExecResult.builder().stdout(all).stderr(all).build();

    assertThat(r.stdout()).containsExactly(all);
    assertThat(r.stderr()).containsExactly(all);
    assertThat(r.stdoutLength()).isEqualTo(256);
    assertThat(r.stderrLength()).isEqualTo(256);
  }

  @Test
  void outputIsCopiedInAtBuildAndOut() {
    byte[] out = {1, 2};
    ExecResult.Builder b = ExecResult.builder().stdout(out);
    ExecResult r = b.build();
    out[0] = 9;
    byte[] returned = r.stdout();
    returned[1] = 9;

    assertThat(r.stdout()).containsExactly(1, 2);
  }

  @Test
  void constructorCopiesTheArrays() {
    byte[] out = {1};
    byte[] err = {2};
    ExecResult r = new ExecResult(0, 0, out, err, false, false, null, null, false);
    out[0] = 9;
    err[0] = 9;
    r.stderr()[0] = 8;

    assertThat(r.stdout()).containsExactly(1);
    assertThat(r.stderr()).containsExactly(2);
  }

  @Test
  void signalImpliesExitCodeMinusOne() {
    ExecResult r = ExecResult.builder().exitCode(0).signal(9).build();

    assertThat(r.exitCode()).isEqualTo(-1);
    assertThat(r.signal()).isEqualTo(9);
    assertThat(r.signaled()).isTrue();
  }

  @Test
  void exitCodeAfterSignalClearsTheSignal() {
    ExecResult r = ExecResult.builder().signal(15).exitCode(1).build();

    assertThat(r.exitCode()).isEqualTo(1);
    assertThat(r.signal()).isZero();
    assertThat(r.signaled()).isFalse();
  }

  @ParameterizedTest(name = "exit {0} signal {1}")
  @CsvSource({"0, 9", "1, 15", "137, 9", "-1, -1", "0, -5"})
  void constructorRejectsASignalWithAnotherExitCodeOrANegativeSignal(int exit, int signal) {
    assertThatThrownBy(
            () -> new ExecResult(exit, signal, null, null, false, false, null, null, false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("signal " + signal + " with exit code " + exit);
  }

  @Test
  void constructorAcceptsASignalWithExitMinusOne() {
    ExecResult r = new ExecResult(-1, 9, null, null, false, false, null, null, false);

    assertThat(r.signaled()).isTrue();
    assertThat(r).isEqualTo(ExecResult.builder().signal(9).build());
  }

  @Test
  void builderRoundTrip() {
    ResourceUsage usage = new ResourceUsage(1024, Duration.ofMillis(5), Duration.ofMillis(6), true);
    ExecResult r =
        ExecResult.builder()
            .exitCode(7)
            .stdout(new byte[] {1})
            .stderr(new byte[] {2, 3})
            .stdoutTruncated(true)
            .stderrTruncated(true)
            .wallTime(Duration.ofSeconds(2))
            .usage(usage)
            .leftoversKilled(true)
            .build();

    assertThat(r.exitCode()).isEqualTo(7);
    assertThat(r.stdout()).containsExactly(1);
    assertThat(r.stderr()).containsExactly(2, 3);
    assertThat(r.stdoutTruncated()).isTrue();
    assertThat(r.stderrTruncated()).isTrue();
    assertThat(r.wallTime()).isEqualTo(Duration.ofSeconds(2));
    assertThat(r.usage()).isEqualTo(usage);
    assertThat(r.leftoversKilled()).isTrue();
    assertThat(r.toBuilder().build()).isEqualTo(r).hasSameHashCodeAs(r);
    assertThat(r.toBuilder().stderrTruncated(false).build()).isNotEqualTo(r);
  }

  @Test
  void equalsAndHashCodeConsiderOutputContent() {
    ExecResult a = ExecResult.of(0, "x", "y");
    ExecResult b = ExecResult.of(0, "x", "y");

    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    assertThat(a).isNotEqualTo(ExecResult.of(0, "x", "z"));
    assertThat(a).isNotEqualTo(ExecResult.of(0, "X", "y"));
    assertThat(a).isNotEqualTo(ExecResult.of(1, "x", "y"));
  }

  @Test
  void toStringShowsLengthsAndFlagsNotContent() {
    ExecResult r =
        ExecResult.builder()
            .stdout("secret".getBytes(StandardCharsets.UTF_8))
            .stdoutTruncated(true)
            .build();

    assertThat(r.toString())
        .contains("stdout=6 bytes (truncated)")
        .contains("stderr=0 bytes")
        .doesNotContain("secret");
  }

  @Test
  void resourceUsageRejectsImpossibleValues() {
    assertThatThrownBy(() -> new ResourceUsage(-2, null, null, false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("peakMemoryBytes -2");
    assertThatThrownBy(() -> new ResourceUsage(0, Duration.ofNanos(-1), null, false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("negative CPU time");
    assertThatThrownBy(() -> new ResourceUsage(0, null, Duration.ofNanos(-1), false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(ResourceUsage.NOT_MEASURED.peakMemoryBytes()).isEqualTo(-1);
    assertThat(ResourceUsage.NOT_MEASURED.cpuUser()).isNull();
  }
}
