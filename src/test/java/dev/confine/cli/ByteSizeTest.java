package dev.confine.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class ByteSizeTest {
  @ParameterizedTest
  @CsvSource({
    "0, 0",
    "1024, 1024",
    "100b, 100",
    "100B, 100",
    "64k, 65536",
    "64K, 65536",
    "1m, 1048576",
    "1M, 1048576",
    "2g, 2147483648",
    "1t, 1099511627776",
    "1.5m, 1572864",
    "1.5M, 1572864",
    "1.k, 1024",
    ".5k, 512",
    "0.1k, 102",
    "1KiB, 1024",
    "1kib, 1024",
    "2MiB, 2097152",
    "2mib, 2097152",
    "1GiB, 1073741824",
    "1TiB, 1099511627776",
    "1kb, 1000",
    "1KB, 1000",
    "1kB, 1000",
    "10mb, 10000000",
    "10MB, 10000000",
    "1.5mb, 1500000",
    "3gb, 3000000000",
    "2tb, 2000000000000",
    "9223372036854775807, 9223372036854775807",
    "8388607t, 9223370937343148032",
  })
  void parses(String text, long bytes) {
    assertThat(ByteSize.parse(text)).isEqualTo(bytes);
  }

  @ParameterizedTest
  @NullAndEmptySource
  void rejectsNothing(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> ByteSize.parse(text))
        .withMessageContaining("empty");
  }

  @ParameterizedTest
  @ValueSource(strings = {"-1", "-1k", "-0"})
  void rejectsNegative(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> ByteSize.parse(text))
        .withMessageContaining("must not be negative");
  }

  @ParameterizedTest
  @ValueSource(strings = {"k", "1 k", " 1", "1.5.5k", "1e3", "+5", "abc", ".", "1,5m", "0x10"})
  void rejectsMalformed(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> ByteSize.parse(text))
        .withMessageStartingWith("invalid size " + JsonString.quote(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"1x", "64kk", "1kibb", "2p", "1bytes"})
  void rejectsUnknownUnits(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> ByteSize.parse(text))
        .withMessageStartingWith("unknown unit");
  }

  @ParameterizedTest
  @ValueSource(strings = {"9223372036854775808", "8388608t", "99999999999999999999999g"})
  void rejectsMoreThanALong(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> ByteSize.parse(text))
        .withMessageContaining("too large");
  }
}
