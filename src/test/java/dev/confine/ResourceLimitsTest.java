package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.SandboxException.Kind;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ResourceLimitsTest {

  @Test
  void noneIsAllZeroAndHasNoCaps() {
    assertThat(ResourceLimits.NONE).isEqualTo(new ResourceLimits(0, 0, 0, 0, 0));
    assertThat(ResourceLimits.NONE.hasCaps()).isFalse();
    assertThat(ResourceLimits.builder().build()).isEqualTo(ResourceLimits.NONE);
  }

  static Stream<Arguments> negativeFields() {
    return Stream.of(
        Arguments.of(
            "cpuMillicores",
            (UnaryOperator<ResourceLimits.Builder>) b -> b.cpuMillicores(-1),
            "sandbox: resources.cpuMillicores -1 must not be negative"),
        Arguments.of(
            "memoryBytes",
            (UnaryOperator<ResourceLimits.Builder>) b -> b.memoryBytes(-2),
            "sandbox: resources.memoryBytes -2 must not be negative"),
        Arguments.of(
            "diskBytes",
            (UnaryOperator<ResourceLimits.Builder>) b -> b.diskBytes(Long.MIN_VALUE),
            "sandbox: resources.diskBytes " + Long.MIN_VALUE + " must not be negative"),
        Arguments.of(
            "maxOutputBytes",
            (UnaryOperator<ResourceLimits.Builder>) b -> b.maxOutputBytes(-1),
            "sandbox: resources.maxOutputBytes -1 must not be negative"),
        Arguments.of(
            "maxProcesses",
            (UnaryOperator<ResourceLimits.Builder>) b -> b.maxProcesses(-3),
            "sandbox: resources.maxProcesses -3 must not be negative"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("negativeFields")
  void negativeFieldIsValidationNamingTheField(
      String field, UnaryOperator<ResourceLimits.Builder> set, String message) {
    assertThatThrownBy(() -> set.apply(ResourceLimits.builder()).build())
        .isInstanceOf(SandboxException.class)
        .hasMessage(message)
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION));
  }

  @Test
  void firstNegativeFieldInDeclarationOrderIsReported() {
    assertThatThrownBy(() -> new ResourceLimits(0, -1, -1, -1, -1))
        .hasMessageContaining("memoryBytes");
    assertThatThrownBy(() -> new ResourceLimits(-1, -1, 0, 0, 0))
        .hasMessageContaining("cpuMillicores");
  }

  static Stream<Arguments> capCases() {
    return Stream.of(
        Arguments.of(new ResourceLimits(1, 0, 0, 0, 0), true),
        Arguments.of(new ResourceLimits(0, ResourceLimits.MIN_MEMORY_BYTES, 0, 0, 0), true),
        Arguments.of(new ResourceLimits(0, 0, 0, 0, 0, 1), true),
        Arguments.of(new ResourceLimits(0, 0, 1, 0, 0), true),
        Arguments.of(new ResourceLimits(0, 0, 0, 0, 1), true),
        Arguments.of(new ResourceLimits(0, 0, 0, 1 << 20, 0), false),
        Arguments.of(new ResourceLimits(0, 0, 0, 0, 0), false));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("capCases")
  void hasCapsIgnoresOnlyTheOutputCap(ResourceLimits limits, boolean caps) {
    assertThat(limits.hasCaps()).isEqualTo(caps);
  }

  @Test
  void builderRoundTrip() {
    ResourceLimits r =
        ResourceLimits.builder()
            .cpuMillicores(250)
            .memoryBytes(64L << 20)
            .diskBytes(7)
            .maxOutputBytes(4096)
            .maxProcesses(32)
            .build();

    assertThat(r).isEqualTo(new ResourceLimits(250, 64L << 20, 7, 4096, 32));
    assertThat(r.toBuilder().build()).isEqualTo(r);
    assertThat(r.toBuilder().maxProcesses(0).build())
        .isEqualTo(new ResourceLimits(250, 64L << 20, 7, 4096, 0));
  }

  @Test
  void extremeValuesAreAccepted() {
    ResourceLimits r =
        new ResourceLimits(
            Integer.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, Integer.MAX_VALUE);

    assertThat(r.cpuMillicores()).isEqualTo(Integer.MAX_VALUE);
    assertThat(r.memoryBytes()).isEqualTo(Long.MAX_VALUE);
    assertThat(r.hasCaps()).isTrue();
  }

  @ParameterizedTest(name = "{0} bytes")
  @org.junit.jupiter.params.provider.ValueSource(longs = {1, 4096, 8192, (1 << 20) - 1})
  void aMemoryCapTooSmallToStartAProgramIsAValidationErrorNamingTheMinimum(long bytes) {
    // Issue 15 finding 6: 4 KiB aborted the JVM; now refused up front, library and CLI alike.
    assertThatThrownBy(() -> ResourceLimits.builder().memoryBytes(bytes).build())
        .isInstanceOf(SandboxException.class)
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION))
        .hasMessageContaining("resources.memoryBytes " + bytes)
        .hasMessageContaining("smallest memory cap, " + ResourceLimits.MIN_MEMORY_BYTES);
  }

  @Test
  void theMinimumMemoryCapItselfAndNoCapAreAccepted() {
    assertThat(ResourceLimits.builder().memoryBytes(ResourceLimits.MIN_MEMORY_BYTES).build())
        .extracting(ResourceLimits::memoryBytes)
        .isEqualTo(ResourceLimits.MIN_MEMORY_BYTES);
    assertThat(ResourceLimits.builder().memoryBytes(0).build()).isEqualTo(ResourceLimits.NONE);
  }

  @Test
  void theCpuThrottleIsItsOwnFieldAndMayNotBeNegative() {
    ResourceLimits r = ResourceLimits.builder().cpuThrottleMillicores(250).build();
    assertThat(r.cpuThrottleMillicores()).isEqualTo(250);
    assertThat(r.cpuMillicores()).isZero();
    assertThat(r.toBuilder().build()).isEqualTo(r);
    assertThat(new ResourceLimits(1, 0, 0, 0, 0)).isEqualTo(new ResourceLimits(1, 0, 0, 0, 0, 0));
    assertThatThrownBy(() -> ResourceLimits.builder().cpuThrottleMillicores(-1).build())
        .hasMessageContaining("cpuThrottleMillicores");
  }
}
