package dev.confine;

import java.util.Collection;
import java.util.Set;

/** The runner behind {@link Runners#allowCommands}. */
final class AllowCommandsRunner implements PolicyRunner {
  private final Runner inner;
  private final Set<String> allowed;

  AllowCommandsRunner(Runner inner, Collection<String> allowed) {
    this.inner = Runners.requireInner(inner);
    this.allowed = allowed == null ? Set.of() : Set.copyOf(allowed);
  }

  @Override
  public Runner inner() {
    return inner;
  }

  @Override
  public ExecRequest admit(ExecRequest request) {
    check(request.command());
    return request;
  }

  void check(String command) {
    if (!allowed.contains(command)) {
      throw SandboxException.of(
          SandboxException.Kind.POLICY_DENIED,
          "command " + Quote.of(command) + " is not in the allow-list of commands");
    }
  }
}
