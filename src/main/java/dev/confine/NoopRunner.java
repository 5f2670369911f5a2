package dev.confine;

import java.util.List;

/** Runs nothing: every exec succeeds with exit 0 and no output. Enforces nothing. */
public final class NoopRunner implements Runner, EnforcementReporter {
  private static final ExecResult EMPTY = ExecResult.ofExit(0);

  /** A runner that runs nothing. */
  public NoopRunner() {}

  @Override
  public ExecResult exec(String command, List<String> args, ExecOptions options) {
    return EMPTY;
  }

  @Override
  public Enforcement enforcement() {
    return Enforcement.NONE;
  }
}
