package dev.confine.linux.tree;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@link TreeLimits}: zero is "no cap", each field alone makes a cap. The record validates nothing:
 * a negative value is no cap either (the callers validate, see ResourceLimits).
 */
class TreeLimitsTest {
  @Test
  void noneHasNoCap() {
    assertThat(TreeLimits.NONE.any()).isFalse();
    assertThat(TreeLimits.NONE).isEqualTo(new TreeLimits(0, 0, 0, 0));
  }

  @Test
  void eachFieldAloneIsACap() {
    assertThat(new TreeLimits(1, 0, 0, 0).any()).isTrue();
    assertThat(new TreeLimits(0, 1, 0, 0).any()).isTrue();
    assertThat(new TreeLimits(0, 0, 1, 0).any()).isTrue();
    assertThat(new TreeLimits(0, 0, 0, 1).any()).isTrue();
    assertThat(
            new TreeLimits(Long.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE)
                .any())
        .isTrue();
  }

  @Test
  void negativeValuesAreNoCap() {
    assertThat(new TreeLimits(-1, 0, 0, 0).any()).isFalse();
    assertThat(new TreeLimits(0, -1, 0, 0).any()).isFalse();
    assertThat(new TreeLimits(0, 0, -1, 0).any()).isFalse();
    assertThat(new TreeLimits(0, 0, 0, Long.MIN_VALUE).any()).isFalse();
    assertThat(new TreeLimits(-5, -5, -5, 1).any()).isTrue();
  }
}
