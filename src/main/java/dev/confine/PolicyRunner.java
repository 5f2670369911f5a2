package dev.confine;

import java.util.List;

/**
 * A runner that puts policy in front of another: every request passes {@link #admit} and then goes
 * to {@link #inner()} as admitted. The decorators of {@link Runners} are policy runners, so the
 * same chain can guard other kinds of requests than {@code exec} (the sessions of {@code
 * dev.confine.session.ProcessManager#of}). A policy runner enforces what its inner runner enforces:
 * it reports the inner runner's enforcement and rows.
 */
public interface PolicyRunner extends Runner, EnforcementReporter {
  /** The runner requests go to once admitted. */
  Runner inner();

  /**
   * Applies this layer's policy to {@code request}.
   *
   * @return the request as the inner runner must receive it (options merged, say)
   * @throws SandboxException when the policy refuses the request
   */
  ExecRequest admit(ExecRequest request);

  /** Admits the request and runs it on {@link #inner()}. */
  @Override
  default ExecResult exec(String command, List<String> args, ExecOptions options) {
    ExecRequest r = admit(ExecRequest.of(command, args, options));
    return inner().exec(r.command(), r.args(), r.options());
  }

  /** The inner runner's enforcement: a policy layer adds no OS-level enforcement. */
  @Override
  default Enforcement enforcement() {
    return Enforcement.of(inner());
  }

  /** The inner runner's rows. */
  @Override
  default List<Capability> capabilities() {
    return Capability.rowsOf(inner());
  }
}
