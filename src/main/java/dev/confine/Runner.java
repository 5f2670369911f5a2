package dev.confine;

import java.util.List;

/**
 * Runs one command under a policy and returns what it did.
 *
 * <p>The contract every implementation keeps:
 *
 * <ul>
 *   <li>{@code exec} blocks until the child's whole process tree is gone; interrupting the calling
 *       thread cancels the call, kills the tree and fails with {@link
 *       SandboxException.Kind#ABORTED} (the thread's interrupt status is set again);
 *   <li>the options' timeout kills the whole tree and fails with {@link
 *       SandboxException.Kind#TIMEOUT};
 *   <li>a non-zero exit is a result, not an error;
 *   <li>a policy the runner cannot enforce fails with {@link SandboxException.Kind#NOT_AVAILABLE}
 *       before anything runs: never silently weaker;
 *   <li>errors after the child started carry the output so far as {@link
 *       SandboxException#partialResult()}.
 * </ul>
 */
public interface Runner {
  /**
   * Runs {@code command} with {@code args} under {@code options}. The command, the arguments, the
   * environment names and values and the work dir reach the kernel as the bytes they stand for in
   * {@link ByteStrings}' encoding: UTF-8, with bytes that are not UTF-8 carried as U+DC80 to
   * U+DCFF, so any byte string can be passed, exactly.
   *
   * @param command the program: a name looked up on the host's PATH, or a path
   * @param args the arguments after the program name, passed verbatim (no shell); null = none
   * @param options the policy of this call; null = {@link ExecOptions#defaults()}
   * @return what the child did, including a non-zero exit
   * @throws SandboxException classified by kind, see the class comment
   */
  ExecResult exec(String command, List<String> args, ExecOptions options);
}
