package dev.confine;

import java.io.Serial;

/**
 * An operation on a process session after it was closed (or, for a signal, after it exited). Its
 * kind is {@link SandboxException.Kind#CONFLICT}: the session's state refuses the operation.
 */
public final class ProcessClosedException extends SandboxException {
  @Serial private static final long serialVersionUID = 1L;

  /** The seed's sentinel text. */
  public static final String MESSAGE = PREFIX + "process session is closed";

  /** The session is closed. */
  public ProcessClosedException() {
    super(Kind.CONFLICT, MESSAGE);
  }
}
