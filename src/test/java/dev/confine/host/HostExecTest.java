package dev.confine.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;

class HostExecTest {
  @Test
  void aDeadlineIsTheTimeoutAfterNow() {
    assertThat(HostExec.saturatedDeadline(100, Duration.ofNanos(50))).isEqualTo(150);
    assertThat(HostExec.saturatedDeadline(100, Duration.ZERO)).isEqualTo(100);
  }

  @Test
  void aNegativeTimeoutIsAWaitAlreadyOverNotOneWithoutEnd() {
    assertThat(HostExec.saturatedDeadline(100, Duration.ofMillis(-5))).isEqualTo(100);
    assertThat(HostExec.saturatedDeadline(-100, Duration.ofDays(-3650))).isEqualTo(-100);
  }

  @Test
  void aDeadlineThatWouldOverflowIsNone() {
    assertThat(HostExec.saturatedDeadline(Long.MAX_VALUE - 10, Duration.ofNanos(20)))
        .isEqualTo(Long.MAX_VALUE);
    assertThat(HostExec.saturatedDeadline(0, ChronoUnit.FOREVER.getDuration()))
        .isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void durationsReadAsPeopleWriteThem() {
    assertThat(HostExec.format(Duration.ofMillis(250))).isEqualTo("250ms");
    assertThat(HostExec.format(Duration.ofSeconds(2))).isEqualTo("2s");
    assertThat(HostExec.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
  }
}
