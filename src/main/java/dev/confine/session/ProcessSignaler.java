package dev.confine.session;

import dev.confine.SandboxException;
import java.util.Optional;

/** A session that can be sent a {@link ProcessSignal}; an optional capability. */
public interface ProcessSignaler {
  /**
   * Sends {@code signal}; the session stays usable.
   *
   * @throws dev.confine.ProcessClosedException when the session is closed or its process has ended
   * @throws SandboxException NOT_AVAILABLE for a signal the session does not support
   */
  void signal(ProcessSignal signal);

  /** {@code session} as a signaler, when it is one. */
  static Optional<ProcessSignaler> of(ProcessSession session) {
    return session instanceof ProcessSignaler s ? Optional.of(s) : Optional.empty();
  }
}
