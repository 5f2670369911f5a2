package dev.confine.linux.confinement;

import dev.confine.linux.sys.Syscalls;
import java.io.Serial;

/**
 * A confinement could not be applied to, or used by, a confinement thread: which layer failed
 * (no_new_privs, landlock, seccomp, netns, mountns, capabilities) and, when a call failed, its
 * errno.
 */
public final class ConfinementException extends RuntimeException {
  @Serial private static final long serialVersionUID = 1L;

  private final String layer;
  private final int errno;

  /** {@code layer} failed: {@code call} returned {@code errno} (0 when no call failed). */
  public ConfinementException(String layer, String call, int errno) {
    super(
        layer
            + ": "
            + call
            + (errno == 0
                ? ""
                : " failed: " + Syscalls.strerror(errno) + " (errno " + errno + ")"));
    this.layer = layer;
    this.errno = errno;
  }

  /**
   * The layer that failed: "no_new_privs", "landlock", "seccomp", "netns", "mountns",
   * "capabilities" or "thread".
   */
  public String layer() {
    return layer;
  }

  /** The errno of the failed call, or 0. */
  public int errno() {
    return errno;
  }
}
