package dev.confine.linux.loop;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReadSpinTest {
  private static final long T0 = 5_000_000_000L;

  @Test
  void noSpinBeforeAnyOutputOrOnceOutputStopsStreaming() {
    ReadSpin spin = new ReadSpin();
    assertThat(spin.spinBefore(T0)).isFalse();
    spin.output(T0);
    assertThat(spin.spinBefore(T0 + ReadSpin.STREAMING_NANOS - 1)).isTrue();
    spin.spun(true);
    assertThat(spin.spinBefore(T0 + ReadSpin.STREAMING_NANOS)).isFalse();
  }

  @Test
  void aStreamKeepsSpinning() {
    ReadSpin spin = new ReadSpin();
    long now = T0;
    for (int i = 0; i < 1_000; i++) {
      spin.output(now);
      now += 7_000;
      assertThat(spin.spinBefore(now)).as("wait %d", i).isTrue();
      spin.spun(true);
    }
  }

  @Test
  void spinsThatFindNothingAreSkippedForTwiceAsManyWaitsEachTimeUpToTheMost() {
    ReadSpin spin = new ReadSpin();
    long now = T0;
    int expectedSkip = 1;
    for (int round = 0; round < 10; round++) {
      spin.output(now);
      assertThat(spin.spinBefore(now)).as("round %d spins", round).isTrue();
      spin.spun(false);
      for (int i = 0; i < expectedSkip; i++) {
        spin.output(now);
        assertThat(spin.spinBefore(now)).as("round %d, skipped wait %d", round, i).isFalse();
      }
      expectedSkip = Math.min(2 * expectedSkip, ReadSpin.SKIP_MAX);
    }
    assertThat(expectedSkip).isEqualTo(ReadSpin.SKIP_MAX);
  }

  @Test
  void aSpinThatFindsOutputEndsTheBackOff() {
    ReadSpin spin = new ReadSpin();
    spin.output(T0);
    for (int i = 0; i < 4; i++) { // skip grows to 8
      while (!spin.spinBefore(T0)) {}
      spin.spun(false);
    }
    while (!spin.spinBefore(T0)) {}
    spin.spun(true);
    assertThat(spin.spinBefore(T0)).isTrue();
    spin.spun(true);
    // One miss after that skips a single wait again, not sixteen.
    assertThat(spin.spinBefore(T0)).isTrue();
    spin.spun(false);
    assertThat(spin.spinBefore(T0)).isFalse();
    assertThat(spin.spinBefore(T0)).isTrue();
  }

  @Test
  void aTricklingChildCostsAtMostOneSpinPerSkipMaxWaits() {
    ReadSpin spin = new ReadSpin();
    long now = T0;
    int spins = 0;
    int waits = 10_000;
    for (int i = 0; i < waits; i++) {
      spin.output(now); // a write every 200 us, each found by the poll after a spin ran dry
      now += 200_000;
      if (spin.spinBefore(now - 199_000)) {
        spins++;
        spin.spun(false);
      }
    }
    assertThat(spins).isLessThanOrEqualTo(waits / ReadSpin.SKIP_MAX + 7);
  }
}
