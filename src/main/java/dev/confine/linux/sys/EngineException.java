package dev.confine.linux.sys;

import java.io.Serial;

/** A failure of the engine that is not a single libc call's errno (a cgroup file, say). */
public final class EngineException extends RuntimeException {
  @Serial private static final long serialVersionUID = 1L;

  /** {@code message}, caused by {@code cause}. */
  public EngineException(String message, Throwable cause) {
    super(message + (cause == null ? "" : ": " + cause.getMessage()), cause);
  }
}
