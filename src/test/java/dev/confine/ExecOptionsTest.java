package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.SandboxException.Kind;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ExecOptionsTest {

  @Test
  void nullComponentsTakeTheirDefaults() {
    ExecOptions o = new ExecOptions(null, null, null, null, null, null);

    assertThat(o.workDir()).isEmpty();
    assertThat(o.stdin()).isNull();
    assertThat(o.timeout()).isEqualTo(Duration.ZERO);
    assertThat(o.env()).isSameAs(EnvPolicy.inheritAll());
    assertThat(o.net()).isSameAs(NetPolicy.defaults());
    assertThat(o.resources()).isSameAs(ResourceLimits.NONE);
    assertThat(o.hasTimeout()).isFalse();
    assertThat(o.hasStdin()).isFalse();
    assertThat(o).isEqualTo(ExecOptions.defaults());
  }

  @Test
  void defaultsAndOrDefaults() {
    ExecOptions custom = ExecOptions.builder().workDir("sub").build();

    assertThat(ExecOptions.orDefaults(null)).isSameAs(ExecOptions.defaults());
    assertThat(ExecOptions.orDefaults(custom)).isSameAs(custom);
    assertThat(ExecOptions.builder().build()).isEqualTo(ExecOptions.defaults());
  }

  @Test
  void nullStdinMeansNoStdin() {
    ExecOptions o = ExecOptions.builder().stdin(null).build();

    assertThat(o.hasStdin()).isFalse();
    assertThat(o.stdinLength()).isEqualTo(-1);
    assertThat(o.stdin()).isNull();
  }

  @Test
  void aStdinStreamIsKeptByReferenceAndComparedByIdentity() {
    java.io.InputStream in = new java.io.ByteArrayInputStream(new byte[] {1});
    ExecOptions o = ExecOptions.builder().stdinStream(in).build();

    assertThat(o.stdinStream()).isSameAs(in);
    assertThat(o.hasStdin()).isTrue();
    assertThat(o.stdin()).isNull();
    assertThat(o.stdinLength()).isEqualTo(-1);
    assertThat(o.toString()).contains("stdin=stream");
    assertThat(o).isEqualTo(ExecOptions.builder().stdinStream(in).build());
    assertThat(o.hashCode()).isEqualTo(ExecOptions.builder().stdinStream(in).build().hashCode());
    assertThat(o)
        .isNotEqualTo(
            ExecOptions.builder()
                .stdinStream(new java.io.ByteArrayInputStream(new byte[] {1}))
                .build());
    assertThat(o.toBuilder().build().stdinStream()).isSameAs(in);
  }

  @Test
  void bytesAndAStreamReplaceEachOtherInTheBuilderAndAreRefusedTogether() {
    java.io.InputStream in = java.io.InputStream.nullInputStream();
    ExecOptions bytes = ExecOptions.builder().stdinStream(in).stdin(new byte[] {2}).build();
    ExecOptions stream = ExecOptions.builder().stdin(new byte[] {2}).stdinStream(in).build();

    assertThat(bytes.stdinStream()).isNull();
    assertThat(bytes.stdin()).containsExactly(2);
    assertThat(stream.stdin()).isNull();
    assertThat(stream.stdinStream()).isSameAs(in);
    assertThat(ExecOptions.builder().stdinStream(in).stdinStream(null).build().hasStdin())
        .isFalse();
    assertThatThrownBy(() -> new ExecOptions("", new byte[0], null, null, null, null, in))
        .isInstanceOf(SandboxException.class)
        .hasMessage("sandbox: stdin is given both as bytes and as a stream; give one")
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION));
  }

  @Test
  void emptyStdinIsAnEmptyPipeNotNoStdin() {
    ExecOptions o = ExecOptions.builder().stdin(new byte[0]).build();

    assertThat(o.hasStdin()).isTrue();
    assertThat(o.stdinLength()).isZero();
    assertThat(o.stdin()).isNotNull().isEmpty();
  }

  @Test
  void nullAndEmptyStdinAreNotEqual() {
    ExecOptions none = ExecOptions.builder().stdin(null).build();
    ExecOptions empty = ExecOptions.builder().stdin(new byte[0]).build();

    assertThat(none).isNotEqualTo(empty);
    assertThat(none.hashCode()).isNotEqualTo(empty.hashCode());
  }

  @Test
  void stdinIsCopiedFromTheBuilderArgument() {
    byte[] input = {1, 2, 3};
    ExecOptions.Builder b = ExecOptions.builder().stdin(input);
    input[0] = 9;
    ExecOptions o = b.build();
    input[1] = 9;

    assertThat(o.stdin()).containsExactly(1, 2, 3);
    assertThat(o.stdinLength()).isEqualTo(3);
  }

  @Test
  void stdinIsCopiedFromTheConstructorArgument() {
    byte[] input = {1, 2, 3};
    ExecOptions o = new ExecOptions("", input, null, null, null, null);
    input[0] = 9;

    assertThat(o.stdin()).containsExactly(1, 2, 3);
  }

  @Test
  void stdinIsCopiedOut() {
    ExecOptions o = ExecOptions.builder().stdin(new byte[] {1, 2, 3}).build();
    byte[] out = o.stdin();
    out[0] = 9;

    assertThat(o.stdin()).containsExactly(1, 2, 3);
    assertThat(o.stdin()).isNotSameAs(o.stdin());
  }

  @Test
  void equalsAndHashCodeConsiderStdinContent() {
    ExecOptions a = ExecOptions.builder().stdin(new byte[] {1, 2}).build();
    ExecOptions b = ExecOptions.builder().stdin(new byte[] {1, 2}).build();
    ExecOptions c = ExecOptions.builder().stdin(new byte[] {1, 3}).build();

    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b).isNotEqualTo(c);
    assertThat(a).isNotEqualTo(ExecOptions.defaults());
  }

  @Test
  void equalsConsidersEveryComponent() {
    ExecOptions base = ExecOptions.defaults();

    assertThat(base.toBuilder().workDir("x").build()).isNotEqualTo(base);
    assertThat(base.toBuilder().timeout(Duration.ofSeconds(1)).build()).isNotEqualTo(base);
    assertThat(base.toBuilder().env(EnvPolicy.none()).build()).isNotEqualTo(base);
    assertThat(base.toBuilder().net(NetPolicy.denyAll()).build()).isNotEqualTo(base);
    assertThat(
            base.toBuilder()
                .resources(
                    ResourceLimits.builder().memoryBytes(ResourceLimits.MIN_MEMORY_BYTES).build())
                .build())
        .isNotEqualTo(base);
    assertThat(base).isNotEqualTo("not options");
  }

  @ParameterizedTest
  @ValueSource(longs = {-1, -1_000_000_000L})
  void negativeTimeoutIsValidation(long nanos) {
    Duration timeout = Duration.ofNanos(nanos);

    assertThatThrownBy(() -> ExecOptions.builder().timeout(timeout).build())
        .isInstanceOf(SandboxException.class)
        .hasMessage("sandbox: timeout " + timeout + " must not be negative")
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION));
  }

  @Test
  void positiveTimeoutIsKept() {
    ExecOptions o = ExecOptions.builder().timeout(Duration.ofMillis(1500)).build();

    assertThat(o.timeout()).isEqualTo(Duration.ofMillis(1500));
    assertThat(o.hasTimeout()).isTrue();
  }

  @Test
  void workDirWithNulIsValidation() {
    assertThatThrownBy(() -> ExecOptions.builder().workDir("a\0b").build())
        .isInstanceOf(SandboxException.class)
        .hasMessage("sandbox: workdir \"a\\x00b\" holds NUL")
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "sub/dir", "/abs/path", "../up", " spaced "})
  void workDirIsKeptVerbatim(String dir) {
    assertThat(ExecOptions.builder().workDir(dir).build().workDir()).isEqualTo(dir);
  }

  @Test
  void builderRoundTrip() {
    EnvPolicy env = EnvPolicy.allow("PATH");
    NetPolicy net = NetPolicy.denyAll();
    ResourceLimits res = ResourceLimits.builder().memoryBytes(1 << 20).build();
    ExecOptions o =
        ExecOptions.builder()
            .workDir("w")
            .stdin(new byte[] {7})
            .timeout(Duration.ofSeconds(3))
            .env(env)
            .net(net)
            .resources(res)
            .build();

    assertThat(o.workDir()).isEqualTo("w");
    assertThat(o.stdin()).containsExactly(7);
    assertThat(o.timeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(o.env()).isSameAs(env);
    assertThat(o.net()).isSameAs(net);
    assertThat(o.resources()).isSameAs(res);
    assertThat(o.toBuilder().build()).isEqualTo(o).hasSameHashCodeAs(o);
  }

  @Test
  void builderNullsResetToDefaults() {
    ExecOptions o =
        ExecOptions.builder().workDir("w").env(EnvPolicy.none()).build().toBuilder()
            .workDir(null)
            .env(null)
            .timeout(null)
            .net(null)
            .resources(null)
            .build();

    assertThat(o).isEqualTo(ExecOptions.defaults());
  }

  @Test
  void toStringShowsStdinLengthNotContent() {
    ExecOptions o = ExecOptions.builder().stdin(new byte[] {'s', 'e', 'c'}).build();

    assertThat(o.toString()).contains("stdin=3 bytes").doesNotContain("sec");
    assertThat(ExecOptions.defaults().toString()).contains("stdin=null");
  }
}
