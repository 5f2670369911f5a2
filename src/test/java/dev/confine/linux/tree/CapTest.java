package dev.confine.linux.tree;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The words messages use for the caps whose breach kills a tree. */
class CapTest {
  @Test
  void theCapsThatKillAreMemoryAndCpu() {
    assertThat(Cap.values()).containsExactly(Cap.MEMORY, Cap.CPU);
    assertThat(Cap.MEMORY.word()).isEqualTo("memory");
    assertThat(Cap.CPU.word()).isEqualTo("cpu");
  }

  @Test
  void theExceededMessageNamesTheCap() {
    assertThat(Cap.MEMORY.exceededMessage()).isEqualTo("memory resource cap exceeded");
    assertThat(Cap.CPU.exceededMessage()).isEqualTo("cpu resource cap exceeded");
  }
}
