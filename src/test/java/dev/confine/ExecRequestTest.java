package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ExecRequestTest {
  static List<Arguments> invalidRequests() {
    return List.of(
        Arguments.of(null, List.of(), "sandbox: command must not be empty"),
        Arguments.of("", List.of("a"), "sandbox: command must not be empty"),
        Arguments.of("r\0m", List.of(), "sandbox: command \"r\\x00m\" holds NUL"),
        Arguments.of("\0", List.of(), "sandbox: command \"\\x00\" holds NUL"),
        Arguments.of("rm", Arrays.asList("a", null), "sandbox: argument 1 is null"),
        Arguments.of("rm", Arrays.asList((String) null), "sandbox: argument 0 is null"),
        Arguments.of("rm", List.of("ok", "x\0y"), "sandbox: argument 1 \"x\\x00y\" holds NUL"),
        Arguments.of("rm", List.of("\0"), "sandbox: argument 0 \"\\x00\" holds NUL"));
  }

  @ParameterizedTest
  @MethodSource("invalidRequests")
  void invalidCommandsAndArgumentsAreValidationErrors(
      String command, List<String> args, String message) {
    assertThatThrownBy(() -> new ExecRequest(command, args, null, false))
        .isExactlyInstanceOf(SandboxException.class)
        .hasMessage(message)
        .satisfies(
            e ->
                assertThat(((SandboxException) e).kind())
                    .isEqualTo(SandboxException.Kind.VALIDATION));
    assertThatThrownBy(() -> ExecRequest.of(command, args, ExecOptions.defaults()))
        .isExactlyInstanceOf(SandboxException.class)
        .hasMessage(message);
  }

  @Test
  void emptyAndBlankArgumentsAreAllowed() {
    ExecRequest r = ExecRequest.of(" ", List.of("", " "), null);
    assertThat(r.command()).isEqualTo(" ");
    assertThat(r.args()).containsExactly("", " ");
  }

  @Test
  void argsAreCopied() {
    List<String> source = new ArrayList<>(List.of("-l", "-a"));
    ExecRequest r = ExecRequest.of("ls", source, null);
    source.add("-h");
    source.set(0, "--changed");
    assertThat(r.args()).containsExactly("-l", "-a");
    assertThat(r.args()).isNotSameAs(source);
    assertThatThrownBy(() -> r.args().add("x")).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void nullOrEmptyArgsBecomeAnEmptyList() {
    ExecRequest nullArgs = ExecRequest.of("ls", null, null);
    assertThat(nullArgs.args()).isNotNull().isEmpty();
    assertThatThrownBy(() -> nullArgs.args().add("x"))
        .isInstanceOf(UnsupportedOperationException.class);
    ExecRequest emptyArgs = ExecRequest.of("ls", new ArrayList<>(), null);
    assertThat(emptyArgs.args()).isEmpty();
    assertThatThrownBy(() -> emptyArgs.args().add("x"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(nullArgs).isEqualTo(emptyArgs);
  }

  @Test
  void nullOptionsBecomeDefaults() {
    ExecRequest r = new ExecRequest("ls", List.of(), null, true);
    assertThat(r.options()).isSameAs(ExecOptions.defaults());
    assertThat(r.options().workDir()).isEmpty();
    assertThat(r.options().net().mode()).isEqualTo(NetMode.DEFAULT);
    assertThat(r.options().hasStdin()).isFalse();
  }

  @Test
  void ofIsNotInteractive() {
    ExecOptions opts = ExecOptions.builder().workDir("w").build();
    ExecRequest r = ExecRequest.of("/bin/echo", List.of("hi"), opts);
    assertThat(r.tty()).isFalse();
    assertThat(r.command()).isEqualTo("/bin/echo");
    assertThat(r.args()).containsExactly("hi");
    assertThat(r.options()).isSameAs(opts);
  }

  @Test
  void withOptionsKeepsTheRest() {
    ExecRequest r = new ExecRequest("sh", List.of("-c", "true"), null, true);
    ExecOptions opts = ExecOptions.builder().workDir("sub").timeout(Duration.ofSeconds(3)).build();
    ExecRequest changed = r.withOptions(opts);
    assertThat(changed.command()).isEqualTo("sh");
    assertThat(changed.args()).containsExactly("-c", "true");
    assertThat(changed.tty()).isTrue();
    assertThat(changed.options()).isSameAs(opts);
    assertThat(r.options()).isSameAs(ExecOptions.defaults());
    assertThat(r.withOptions(null).options()).isSameAs(ExecOptions.defaults());
    assertThat(ExecRequest.of("sh", List.of(), null).withOptions(opts).tty()).isFalse();
  }

  @Test
  void equalRequestsAreEqual() {
    ExecRequest a = ExecRequest.of("ls", new ArrayList<>(List.of("-l")), null);
    ExecRequest b = ExecRequest.of("ls", List.of("-l"), ExecOptions.defaults());
    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    assertThat(a).isNotEqualTo(new ExecRequest("ls", List.of("-l"), null, true));
  }
}
