package dev.confine.linux.sys;

import java.io.Serial;

/** A libc call that failed with an errno value. */
public class ErrnoException extends RuntimeException {
  @Serial private static final long serialVersionUID = 1L;

  private final String call;
  private final int errno;

  /** {@code call} failed with {@code errno}. */
  public ErrnoException(String call, int errno) {
    super(call + ": " + Syscalls.strerror(errno) + " (errno " + errno + ")");
    this.call = call;
    this.errno = errno;
  }

  /** The name of the call that failed. */
  public String call() {
    return call;
  }

  /** The errno value. */
  public int errno() {
    return errno;
  }
}
