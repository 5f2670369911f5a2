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
  }
}
