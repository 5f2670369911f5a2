package dev.confine.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Go's own table for time.ParseDuration (time_test.go), minus the negative results we refuse. */
class GoDurationTest {
  private static final long NS = 1;
  private static final long US = 1_000 * NS;
  private static final long MS = 1_000 * US;
  private static final long S = 1_000 * MS;
  private static final long M = 60 * S;
  private static final long H = 60 * M;

  static Stream<Arguments> valid() {
    return Stream.of(
        // simple
        Arguments.of("0", 0L),
        Arguments.of("5s", 5 * S),
        Arguments.of("30s", 30 * S),
        Arguments.of("1478s", 1478 * S),
        // sign: Go accepts one; zero is not negative
        Arguments.of("+5s", 5 * S),
        Arguments.of("-0", 0L),
        Arguments.of("+0", 0L),
        Arguments.of("-0s", 0L),
        Arguments.of("0s", 0L),
        // decimal
        Arguments.of("5.0s", 5 * S),
        Arguments.of("5.6s", 5 * S + 600 * MS),
        Arguments.of("5.s", 5 * S),
        Arguments.of("1.s", 1 * S),
        Arguments.of(".5s", 500 * MS),
        Arguments.of("1.0s", 1 * S),
        Arguments.of("1.00s", 1 * S),
        Arguments.of("1.004s", 1 * S + 4 * MS),
        Arguments.of("1.0040s", 1 * S + 4 * MS),
        Arguments.of("100.00100s", 100 * S + 1 * MS),
        Arguments.of("1.5h", 90 * M),
        // units
        Arguments.of("10ns", 10 * NS),
        Arguments.of("11us", 11 * US),
        Arguments.of("12\u00b5s", 12 * US),
        Arguments.of("12\u03bcs", 12 * US),
        Arguments.of("13ms", 13 * MS),
        Arguments.of("250ms", 250 * MS),
        Arguments.of("14s", 14 * S),
        Arguments.of("15m", 15 * M),
        Arguments.of("16h", 16 * H),
        // composite
        Arguments.of("3h30m", 3 * H + 30 * M),
        Arguments.of("2h45m", 2 * H + 45 * M),
        Arguments.of("1m30s", 90 * S),
        Arguments.of("1h2m3.5s", 1 * H + 2 * M + 3 * S + 500 * MS),
        Arguments.of("10.5s4m", 4 * M + 10 * S + 500 * MS),
        Arguments.of("1h2m3s4ms5us6ns", 1 * H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS),
        Arguments.of("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
        // large values
        Arguments.of("52763797000ns", 52763797000L),
        Arguments.of("0.3333333333333333333h", 20 * M),
        Arguments.of("9007199254740993ns", (1L << 53) + 1),
        Arguments.of("9223372036854775807ns", Long.MAX_VALUE),
        Arguments.of("9223372036854775.807us", Long.MAX_VALUE),
        Arguments.of("9223372036s854ms775us807ns", Long.MAX_VALUE),
        Arguments.of("0.100000000000000000000h", 6 * M),
        // the first overflow check of Go's leadingFraction
        Arguments.of("0.830103483285477580700h", 49 * M + 48 * S + 372539827 * NS));
  }

  @ParameterizedTest
  @MethodSource("valid")
  void parsesLikeGo(String text, long nanos) {
    assertThat(GoDuration.parse(text)).isEqualTo(Duration.ofNanos(nanos));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "-",
        "+",
        "s",
        ".",
        "-.",
        ".s",
        "+.s",
        "1.5.5s",
        "\u0085\u0085",
        "hello",
        "1s ",
        " 1s",
        "1s-2s",
        "1e3s",
        "١s" // an Arabic-Indic digit: Go only takes ASCII digits
      })
  void rejectsMalformed(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> GoDuration.parse(text))
        .withMessageContaining("duration");
  }

  @ParameterizedTest
  @ValueSource(strings = {"3", "5", "1h5", "-7"})
  void rejectsAMissingUnit(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> GoDuration.parse(text))
        .withMessageContaining("missing unit");
  }

  @ParameterizedTest
  @ValueSource(strings = {"1d", "5x", "1S", "3 s", "1sec", "2H"})
  void rejectsAnUnknownUnitNamingIt(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> GoDuration.parse(text))
        .withMessageContaining("unknown unit");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "9223372036854775808ns",
        "9223372036854775.808us",
        "9223372036854ms775us808ns",
        "99999999999999999999ns",
        "2562048h",
        "9223372036854775808ns9223372036854775808ns"
      })
  void rejectsOverflow(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> GoDuration.parse(text))
        .withMessageContaining(JsonString.quote(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"-5s", "-2m3.4s", "-1ns", "-9223372036854775808ns"})
  void rejectsNegativeDurationsThatGoWouldAccept(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> GoDuration.parse(text))
        .withMessage("duration " + JsonString.quote(text) + " must not be negative");
  }

  @Test
  void rejectsNull() {
    assertThatIllegalArgumentException().isThrownBy(() -> GoDuration.parse(null));
  }
}
