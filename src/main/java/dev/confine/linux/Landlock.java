package dev.confine.linux;

import dev.confine.linux.libc.LibC;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Landlock write bounds for the calling thread and every process it spawns afterwards: the ruleset
 * handles every write-side right of the kernel's ABI (not read or execute: reads stay open) and
 * grants them beneath the writable paths only. On ABI 6 and newer it also scopes signals and
 * abstract unix sockets, so the children cannot signal the JVM or reach its abstract sockets.
 *
 * <p>Constants newer than the generated bindings (Debian 12's 6.1 headers carry ABI 2) are defined
 * here from the kernel UAPI ({@code include/uapi/linux/landlock.h}).
 */
public final class Landlock {
  private Landlock() {}

  static final long ACCESS_FS_TRUNCATE = 1L << 14; // ABI 3
  static final long ACCESS_FS_IOCTL_DEV = 1L << 15; // ABI 5
  static final long SCOPE_ABSTRACT_UNIX_SOCKET = 1L << 0; // ABI 6
  static final long SCOPE_SIGNAL = 1L << 1; // ABI 6

  private static final int EOPNOTSUPP = 95; // x86-64 errno, absent from the bindings

  private static final int ABI = probe();

  private static int probe() {
    try {
      return Syscalls.landlockCreateRuleset(
          MemorySegment.NULL, 0, LibC.LANDLOCK_CREATE_RULESET_VERSION());
    } catch (LinkageError | RuntimeException e) {
      return -LibC.ENOSYS();
    }
  }

  /** The kernel's Landlock ABI version, or 0 when Landlock cannot be used. */
  public static int abi() {
    return Math.max(ABI, 0);
  }

  /** Why Landlock cannot be used here (kernel too old, LSM not enabled), or empty when it can. */
  public static Optional<String> unavailabilityCause() {
    if (ABI > 0) {
      return Optional.empty();
    }
    int errno = -ABI;
    if (errno == LibC.ENOSYS()) {
      return Optional.of("the kernel has no Landlock (Linux 5.13 or newer is needed)");
    }
    if (errno == EOPNOTSUPP) {
      return Optional.of(
          "Landlock is built into the kernel but not enabled (add landlock to the lsm= boot"
              + " parameter)");
    }
    return Optional.of("Landlock probe failed: " + Syscalls.strerror(errno));
  }

  /** Every write-side filesystem right the kernel's ABI knows. */
  static long handledWriteAccess(int abi) {
    long access =
        LibC.LANDLOCK_ACCESS_FS_WRITE_FILE()
            | LibC.LANDLOCK_ACCESS_FS_REMOVE_DIR()
            | LibC.LANDLOCK_ACCESS_FS_REMOVE_FILE()
            | LibC.LANDLOCK_ACCESS_FS_MAKE_CHAR()
            | LibC.LANDLOCK_ACCESS_FS_MAKE_DIR()
            | LibC.LANDLOCK_ACCESS_FS_MAKE_REG()
            | LibC.LANDLOCK_ACCESS_FS_MAKE_SOCK()
            | LibC.LANDLOCK_ACCESS_FS_MAKE_FIFO()
            | LibC.LANDLOCK_ACCESS_FS_MAKE_BLOCK()
            | LibC.LANDLOCK_ACCESS_FS_MAKE_SYM();
    if (abi >= 2) {
      access |= LibC.LANDLOCK_ACCESS_FS_REFER();
    }
    if (abi >= 3) {
      access |= ACCESS_FS_TRUNCATE;
    }
    if (abi >= 5) {
      access |= ACCESS_FS_IOCTL_DEV;
    }
    return access;
  }

  /** The rights a rule on a non-directory may carry (the kernel refuses directory rights there). */
  private static long fileAccess(long handled) {
    return handled
        & (LibC.LANDLOCK_ACCESS_FS_WRITE_FILE() | ACCESS_FS_TRUNCATE | ACCESS_FS_IOCTL_DEV);
  }

  /**
   * Restricts the calling thread (and what it spawns from now on) to writes beneath {@code
   * writable}. no_new_privs must already be set on this thread. Paths that do not exist are
   * skipped. Irreversible for the thread.
   *
   * @throws ConfinementException naming the call that failed and its errno
   */
  static void restrictSelf(List<Path> writable) {
    int abi = abi();
    if (abi <= 0) {
      throw new ConfinementException("landlock", unavailabilityCause().orElse("unavailable"), 0);
    }
    long handled = handledWriteAccess(abi);
    long scoped = abi >= 6 ? SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET : 0;
    try (Arena a = Arena.ofConfined()) {
      // struct landlock_ruleset_attr { u64 handled_access_fs; u64 handled_access_net (ABI 4);
      // u64 scoped (ABI 6); }: pass only the size this kernel knows.
      MemorySegment attr = a.allocate(24, 8);
      attr.set(ValueLayout.JAVA_LONG, 0, handled);
      attr.set(ValueLayout.JAVA_LONG, 8, 0L);
      attr.set(ValueLayout.JAVA_LONG, 16, scoped);
      long size = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
      int ruleset = Syscalls.landlockCreateRuleset(attr, size, 0);
      if (ruleset < 0) {
        throw new ConfinementException("landlock", "landlock_create_ruleset", -ruleset);
      }
      try {
        // struct landlock_path_beneath_attr { u64 allowed_access; s32 parent_fd; } __packed
        MemorySegment rule = a.allocate(12, 8);
        for (Path p : writable) {
          int fd = Syscalls.open(p.toString(), LibC.O_PATH() | LibC.O_CLOEXEC());
          if (fd < 0) {
            if (-fd == LibC.ENOENT()) {
              continue;
            }
            throw new ConfinementException("landlock", "open(O_PATH) " + p, -fd);
          }
          try {
            long allowed = Files.isDirectory(p) ? handled : fileAccess(handled);
            rule.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, allowed);
            rule.set(ValueLayout.JAVA_INT_UNALIGNED, 8, fd);
            int r = Syscalls.landlockAddRule(ruleset, LibC.LANDLOCK_RULE_PATH_BENEATH(), rule);
            if (r < 0) {
              throw new ConfinementException("landlock", "landlock_add_rule " + p, -r);
            }
          } finally {
            Syscalls.close(fd);
          }
        }
        int r = Syscalls.landlockRestrictSelf(ruleset);
        if (r < 0) {
          throw new ConfinementException("landlock", "landlock_restrict_self", -r);
        }
      } finally {
        Syscalls.close(ruleset);
      }
    }
  }
}
