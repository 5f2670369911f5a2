package dev.confine.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ExecOptions;
import dev.confine.SandboxException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProcessSpecTest {
  @Test
  void anImmutableArgvIsAccepted() {
    // List.of(...).contains(null) throws NullPointerException; the check must not rely on it.
    ProcessSpec spec = ProcessSpec.pipes(List.of("ls", "-l"));
    assertThat(spec.argv()).containsExactly("ls", "-l");
  }

  @Test
  void defaultsTheIdTheSizeAndTheOptions() {
    ProcessSpec spec = new ProcessSpec(null, List.of("sh"), true, 0, -1, null);
    assertThat(spec.id()).isEmpty();
    assertThat(spec.rows()).isEqualTo(ProcessSpec.DEFAULT_ROWS);
    assertThat(spec.cols()).isEqualTo(ProcessSpec.DEFAULT_COLS);
    assertThat(spec.options()).isEqualTo(ExecOptions.defaults());
  }

  @Test
  void anEmptyOrNullHoldingArgvIsRefused() {
    for (List<String> argv : Arrays.asList(null, List.<String>of(), Arrays.asList("ls", null))) {
      assertThatThrownBy(() -> ProcessSpec.pipes(argv))
          .isInstanceOfSatisfying(
              SandboxException.class,
              e -> assertThat(e.kind()).isEqualTo(SandboxException.Kind.VALIDATION));
    }
  }

  @Test
  void argvIsCopied() {
    List<String> argv = new ArrayList<>(List.of("ls"));
    ProcessSpec spec = ProcessSpec.pipes(argv);
    argv.add("-l");
    assertThat(spec.argv()).containsExactly("ls");
  }
}
