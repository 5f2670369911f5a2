package dev.confine.testing;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

class HostRequirementsTest {
  @Test
  void anAvailableRequirementContinues() {
    assertThatCode(() -> HostRequirements.require(true, "x")).doesNotThrowAnyException();
  }

  @Test
  void aMissingRequirementSkipsOrFailsWithTheReason() {
    Class<? extends Throwable> expected =
        HostRequirements.requireAll() ? AssertionFailedError.class : TestAbortedException.class;
    assertThatThrownBy(() -> HostRequirements.require(false, "needs a unicorn"))
        .isInstanceOf(expected)
        .hasMessageContaining("needs a unicorn");
  }
}
