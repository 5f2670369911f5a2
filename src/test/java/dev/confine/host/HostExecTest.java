package dev.confine.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class HostExecTest {
  @Test
  void durationsReadAsPeopleWriteThem() {
    assertThat(HostExec.format(Duration.ofMillis(250))).isEqualTo("250ms");
    assertThat(HostExec.format(Duration.ofSeconds(2))).isEqualTo("2s");
    assertThat(HostExec.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
    assertThat(HostExec.format(Duration.ofNanos(1))).isEqualTo("1ns");
    assertThat(HostExec.format(Duration.ofNanos(1500))).isEqualTo("1.5us");
    assertThat(HostExec.format(Duration.ofNanos(2_000_001))).isEqualTo("2.000001ms");
    assertThat(HostExec.format(Duration.ofSeconds(90))).isEqualTo("90s");
    assertThat(HostExec.format(Duration.ofSeconds(Long.MAX_VALUE))).endsWith("s");
  }
}
