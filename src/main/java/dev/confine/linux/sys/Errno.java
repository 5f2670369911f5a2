package dev.confine.linux.sys;

import dev.confine.SandboxException.Kind;
import dev.confine.linux.libc.LibC;
import java.util.Locale;

/**
 * What an errno value means to the layers above the engine, in one place: they never compare errno
 * numbers themselves.
 */
public final class Errno {
  // Not in the generated bindings; the generic Linux values, the same on x86-64 and arm64.
  private static final int EXDEV = 18;
  private static final int ELOOP = 40;

  private Errno() {}

  /** What a failed call's errno says about the path or program it was given. */
  public enum Meaning {
    /** EPERM, EACCES: not allowed. */
    PERMISSION,
    /** ENOENT: no such file or directory. */
    NOT_FOUND,
    /** ENOTDIR: a component is not a directory. */
    NOT_A_DIRECTORY,
    /** EXDEV from openat2 RESOLVE_BENEATH: the path leads out of the directory it must stay in. */
    ESCAPES,
    /** ELOOP: a symbolic link where none may be followed (or too many). */
    SYMLINK,
    /** Anything else: a failure of the host, not of the caller's input. */
    OTHER
  }

  /** The meaning of {@code errno}. */
  public static Meaning meaning(int errno) {
    if (errno == LibC.EPERM() || errno == LibC.EACCES()) {
      return Meaning.PERMISSION;
    }
    if (errno == LibC.ENOENT()) {
      return Meaning.NOT_FOUND;
    }
    if (errno == LibC.ENOTDIR()) {
      return Meaning.NOT_A_DIRECTORY;
    }
    if (errno == EXDEV) {
      return Meaning.ESCAPES;
    }
    return errno == ELOOP ? Meaning.SYMLINK : Meaning.OTHER;
  }

  /**
   * The kind of error a failed spawn of the caller's program is: FORBIDDEN when it may not be run,
   * NOT_FOUND when it vanished between the lookup and the spawn, INTERNAL otherwise.
   */
  public static Kind spawnKind(int errno) {
    return switch (meaning(errno)) {
      case PERMISSION -> Kind.FORBIDDEN;
      case NOT_FOUND -> Kind.NOT_FOUND;
      default -> Kind.INTERNAL;
    };
  }

  /** {@code strerror(errno)} as the middle of a sentence: {@code "no such file or directory"}. */
  public static String describe(int errno) {
    String s = Syscalls.strerror(errno);
    return s.isEmpty()
        ? "errno " + errno
        : s.substring(0, 1).toLowerCase(Locale.ROOT) + s.substring(1);
  }
}
