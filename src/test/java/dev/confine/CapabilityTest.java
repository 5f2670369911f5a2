package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.Capability.Dimension;
import java.util.Arrays;
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
}
