package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.testing.FakeRunner;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AllowCommandsTest {
  private final FakeRunner inner = new FakeRunner();

  @Test
  void nullOrEmptyAllowListRejectsEveryCommand() {
    for (List<String> allowed :
        new ArrayList<List<String>>(java.util.Arrays.asList(null, List.of()))) {
      Runner r = Runners.allowCommands(inner, allowed);
      assertThatThrownBy(() -> r.exec("echo", List.of("hi"), null))
          .isInstanceOf(SandboxException.class)
          .extracting(e -> ((SandboxException) e).kind())
          .isEqualTo(SandboxException.Kind.POLICY_DENIED);
    }
    assertThat(inner.callCount()).isZero();
  }

  @Test
  void exactStringMatchOnly() {
    Runner r = Runners.allowCommands(inner, List.of("echo", "/bin/ls"));
    assertThatThrownBy(() -> r.exec("/usr/bin/echo", List.of(), null))
        .hasMessage("sandbox: command \"/usr/bin/echo\" is not in the allow-list of commands");
    assertThatThrownBy(() -> r.exec("ls", List.of(), null)).isInstanceOf(SandboxException.class);
    assertThatThrownBy(() -> r.exec("ECHO", List.of(), null)).isInstanceOf(SandboxException.class);
    assertThat(inner.callCount()).isZero();
  }

  @Test
  void allowedCommandReachesInnerUnchanged() {
    inner.enqueue(ExecResult.of(3, "out", "err"));
    ExecOptions opts = ExecOptions.builder().workDir("w").stdin(new byte[] {1}).build();
    Runner r = Runners.allowCommands(inner, List.of("echo"));

    ExecResult res = r.exec("echo", List.of("a", "b"), opts);

    assertThat(res.exitCode()).isEqualTo(3);
    assertThat(res.stdoutText()).isEqualTo("out");
    assertThat(inner.lastRequest())
        .isEqualTo(new ExecRequest("echo", List.of("a", "b"), opts, false));
  }

  @Test
  void allowListIsCopiedAtConstruction() {
    List<String> allowed = new ArrayList<>(List.of("echo"));
    Runner r = Runners.allowCommands(inner, allowed);
    allowed.add("rm");
    assertThatThrownBy(() -> r.exec("rm", List.of(), null)).isInstanceOf(SandboxException.class);
  }

  @Test
  void reportsTheInnerEnforcementExactly() {
    Enforcement e = Enforcement.builder().envAllowList(true).memoryCap(true).build();
    inner.reporting(e);
    assertThat(Enforcement.of(Runners.allowCommands(inner, List.of()))).isEqualTo(e);
    assertThat(Enforcement.of(Runners.allowCommands(new NoopRunner(), List.of())))
        .isEqualTo(Enforcement.NONE);
  }

  @Test
  void malformedRequestsAreValidationErrorsBeforeTheAllowList() {
    Runner r = Runners.allowCommands(inner, List.of("echo"));
    assertThatThrownBy(() -> r.exec("", List.of(), null))
        .isInstanceOf(SandboxException.class)
        .extracting(e -> ((SandboxException) e).kind())
        .isEqualTo(SandboxException.Kind.VALIDATION);
  }
}
