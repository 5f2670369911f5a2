package dev.confine.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;

class DeadlinesTest {
  @Test
  void aDeadlineIsTheTimeoutAfterNow() {
    assertThat(Deadlines.after(100, Duration.ofNanos(50))).isEqualTo(150);
    assertThat(Deadlines.after(100, Duration.ZERO)).isEqualTo(100);
  }

  @Test
  void aNegativeTimeoutIsAWaitAlreadyOverNotOneWithoutEnd() {
    assertThat(Deadlines.after(100, Duration.ofMillis(-5))).isEqualTo(100);
    assertThat(Deadlines.after(-100, Duration.ofDays(-3650))).isEqualTo(-100);
  }

  @Test
  void aDeadlineThatWouldOverflowIsNone() {
    assertThat(Deadlines.after(Long.MAX_VALUE - 10, Duration.ofNanos(20)))
        .isEqualTo(Long.MAX_VALUE);
    assertThat(Deadlines.after(0, ChronoUnit.FOREVER.getDuration())).isEqualTo(Long.MAX_VALUE);
  }
}
