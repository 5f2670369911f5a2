package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.Capability.Dimension;
import dev.confine.testing.FakeRunner;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class CapabilityTest {
  @Test
  void everyDimensionHasItsOwnLowerCaseLabel() {
    assertThat(Arrays.stream(Dimension.values()).map(Dimension::label))
        .doesNotHaveDuplicates()
        .allMatch(l -> l.matches("[a-z][a-z_ -]*[a-z]"));
    assertThat(Dimension.TREE_KILL.label()).isEqualTo("tree kill");
    assertThat(Dimension.NET_DENY_ALL.label()).isEqualTo("net deny_all");
  }

  @Test
  void aRowNamesItsDimensionAndItsDetail() {
    assertThatThrownBy(() -> new Capability(null, true, "x"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("dimension");
    assertThatThrownBy(() -> new Capability(Dimension.DISK, false, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("detail");
  }

  @Test
  void aRunnerThatDoesNotReportHasTheRowsOfNothingEnforced() {
    Runner silent = (c, a, o) -> ExecResult.ofExit(0);
    assertThat(Capability.rowsOf(silent))
        .isEqualTo(Capability.rowsOf(Enforcement.NONE))
        .isEqualTo(Capability.rowsOf((Runner) null))
        .isEqualTo(new NoopRunner().capabilities())
        .allMatch(c -> !c.enforced());
  }

  @Test
  void theRowsOfAReportSayWhatItSaysAndDecoratorsPassTheInnerRowsOn() {
    FakeRunner fake =
        new FakeRunner()
            .reporting(
                Enforcement.builder()
                    .filesystemBounds(true)
                    .cpuThrottle(true)
                    .pidsCap(true)
                    .build());
    assertThat(fake.capabilities())
        .filteredOn(Capability::enforced)
        .extracting(Capability::dimension)
        .containsExactly(Dimension.FILESYSTEM_BOUNDS, Dimension.CPU_THROTTLE, Dimension.PIDS);
    Runner decorated =
        Runners.withApproval(
            Runners.allowCommands(Runners.withDefaults(fake, null), List.of("ls")),
            request -> Decision.ALLOW);
    assertThat(Capability.rowsOf(decorated)).isEqualTo(fake.capabilities());
  }
}
