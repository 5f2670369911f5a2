package dev.confine.linux.sys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import org.junit.jupiter.api.Test;

class AvailabilityTest {
  private static final Availability NO_LANDLOCK = Availability.unavailable("no Landlock");

  @Test
  void anAvailableMechanismHasNoCauseAndEnsuringItReturns() {
    assertThat(Availability.AVAILABLE.isAvailable()).isTrue();
    assertThat(Availability.AVAILABLE.unavailabilityCause()).isEmpty();
    Availability.AVAILABLE.ensureAvailable();
    assertThat(Availability.ofNullable(null)).isSameAs(Availability.AVAILABLE);
  }

  @Test
  void anUnavailableOneIsNotAvailableForItsCause() {
    assertThat(NO_LANDLOCK.isAvailable()).isFalse();
    assertThat(NO_LANDLOCK.unavailabilityCause()).contains("no Landlock");
    assertThat(Availability.ofNullable("no Landlock")).isEqualTo(NO_LANDLOCK);
    assertThatThrownBy(NO_LANDLOCK::ensureAvailable)
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE))
        .hasMessage("sandbox: no Landlock");
  }

  @Test
  void aPrefixGoesBeforeTheCauseOnly() {
    assertThat(NO_LANDLOCK.prefixed("the confinement needs Landlock: ").unavailabilityCause())
        .contains("the confinement needs Landlock: no Landlock");
    assertThat(Availability.AVAILABLE.prefixed("never shown: ").isAvailable()).isTrue();
  }

  @Test
  void bothAreAvailableOrTheFirstThatIsNotSaysWhy() {
    Availability noSeccomp = Availability.unavailable("no seccomp");
    assertThat(Availability.AVAILABLE.and(Availability.AVAILABLE).isAvailable()).isTrue();
    assertThat(NO_LANDLOCK.and(noSeccomp).unavailabilityCause()).contains("no Landlock");
    assertThat(Availability.AVAILABLE.and(noSeccomp).unavailabilityCause()).contains("no seccomp");
    assertThat(noSeccomp.and(Availability.AVAILABLE).unavailabilityCause()).contains("no seccomp");
  }
}
