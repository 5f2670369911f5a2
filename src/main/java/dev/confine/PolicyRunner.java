package dev.confine;

/**
 * A runner that puts policy in front of another: every request passes {@link #admit} and then goes
 * to {@link #inner()} as admitted. The decorators of {@link Runners} are policy runners, so the
 * same chain can guard other kinds of requests than {@code exec} (the sessions of {@code
 * dev.confine.session.ProcessManager#of}).
 */
public interface PolicyRunner extends Runner {
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
  default ExecResult exec(String command, java.util.List<String> args, ExecOptions options) {
    ExecRequest r = admit(ExecRequest.of(command, args, options));
    return inner().exec(r.command(), r.args(), r.options());
  }
}
