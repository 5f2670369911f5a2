package dev.confine;

import java.util.Objects;

/** The runner behind {@link Runners#withDefaults}. */
final class DefaultsRunner implements PolicyRunner {
  private final Runner inner;
  private final ExecOptions defaults;

  DefaultsRunner(Runner inner, ExecOptions defaults) {
    this.inner = Runners.requireInner(inner);
    this.defaults = DefaultsMerge.requireNoStream(ExecOptions.orDefaults(defaults));
  }

  @Override
  public Runner inner() {
    return inner;
  }

  @Override
  public ExecRequest admit(ExecRequest request) {
    return request.withOptions(DefaultsMerge.merge(defaults, request.options()));
  }

  ExecOptions defaults() {
    return defaults;
  }

  @Override
  public String toString() {
    return "DefaultsRunner[" + Objects.toString(inner) + "]";
  }
}
