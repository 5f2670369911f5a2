package dev.confine;

import java.util.List;
import java.util.Objects;

/** The runner behind {@link Runners#withDefaults}. */
final class DefaultsRunner implements Runner, EnforcementReporter {
  private final Runner inner;
  private final ExecOptions defaults;

  DefaultsRunner(Runner inner, ExecOptions defaults) {
    this.inner = Runners.requireInner(inner);
    this.defaults = ExecOptions.orDefaults(defaults);
  }

  @Override
  public ExecResult exec(String command, List<String> args, ExecOptions options) {
    ExecRequest request = ExecRequest.of(command, args, options);
    return inner.exec(
        request.command(), request.args(), DefaultsMerge.merge(defaults, request.options()));
  }

  ExecOptions defaults() {
    return defaults;
  }

  @Override
  public Enforcement enforcement() {
    return Enforcement.of(inner);
  }

  @Override
  public String toString() {
    return "DefaultsRunner[" + Objects.toString(inner) + "]";
  }
}
