package dev.confine.session;

import dev.confine.Runner;
import dev.confine.SandboxException;
import java.util.List;
import java.util.Optional;

/**
 * Starts, lists and terminates the sessions of a backend. Ids stay reserved until the session is
 * closed, even after its process ended.
 */
public interface ProcessManager {
  /**
   * Starts a session under the spec's policy, as {@link Runner#exec} would run the same command.
   *
   * @throws SandboxException CONFLICT when a session with the spec's id is open; otherwise the same
   *     kinds as {@code exec} for a request it refuses or cannot start
   */
  ProcessSession start(ProcessSpec spec);

  /** The open sessions, oldest first (ties by id). */
  List<ProcessInfo> list();

  /**
   * Terminates session {@code id} (see {@link ProcessSession#terminate()}) and waits up to 10 s for
   * it to end. An ended session is left as it is.
   *
   * @throws SandboxException NOT_FOUND for an unknown id; NOT_AVAILABLE while it is still starting
   */
  void terminate(String id);

  /**
   * The manager behind {@code runner}: the runner itself when it manages sessions; for a decorator
   * (allow-list, defaults, approval), a manager that puts the decorator's policy in front of its
   * backend's manager (approval sees {@code tty} = true for terminal sessions), which refuses with
   * NOT_AVAILABLE when the backend has none; empty for a null runner or one without sessions.
   */
  static Optional<ProcessManager> of(Runner runner) {
    return PolicyChainManager.of(runner);
  }
}
