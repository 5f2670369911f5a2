package dev.confine.linux.spawn;

import dev.confine.linux.libc.siginfo_t;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The siginfo that {@code waitid(P_PIDFD)} fills on the loop thread, and how to read one. */
public final class Reaping {
  private static final long SI_CODE_OFFSET = siginfo_t.si_code$offset();
  private static final long SI_STATUS_OFFSET =
      siginfo_t
          .layout()
          .byteOffset(
              PathElement.groupElement("_sifields"),
              PathElement.groupElement("_sigchld"),
              PathElement.groupElement("si_status"));

  /** Used only on the loop thread, one handler call at a time. */
  public static final MemorySegment SIGINFO = Arena.global().allocate(siginfo_t.layout());

  private Reaping() {}

  /** The exit status in {@link #SIGINFO} after a successful waitid. */
  public static ExitStatus status() {
    return status(SIGINFO);
  }

  /** The exit status in {@code siginfo} after a successful waitid. */
  public static ExitStatus status(MemorySegment siginfo) {
    return ExitStatus.fromSiginfo(
        siginfo.get(ValueLayout.JAVA_INT, SI_CODE_OFFSET),
        siginfo.get(ValueLayout.JAVA_INT, SI_STATUS_OFFSET));
  }
}
