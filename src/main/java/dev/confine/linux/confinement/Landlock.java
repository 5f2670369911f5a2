package dev.confine.linux.confinement;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Availability;
import dev.confine.linux.sys.Syscalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Landlock bounds for the calling thread and every process it spawns afterwards: the ruleset
 * handles every write-side right of the kernel's ABI and the right to read files, grants writes
 * beneath the writable paths only and reads everywhere but the device directories (see {@link
 * LandlockRules}; execution and directory listing stay open). On ABI 6 and newer it also scopes
 * signals and abstract unix sockets, so the children cannot signal the JVM or reach its abstract
 * sockets.
 *
 * <p>Constants newer than the generated bindings (Debian 12's 6.1 headers carry ABI 2) are defined
 * here from the kernel UAPI ({@code include/uapi/linux/landlock.h}).
 */
public final class Landlock {
  private Landlock() {}

  static final long ACCESS_FS_TRUNCATE = 1L << 14; // ABI 3
  static final long ACCESS_FS_IOCTL_DEV = 1L << 15; // ABI 5
  static final long ACCESS_NET_BIND_TCP = 1L << 0; // ABI 4
  static final long ACCESS_NET_CONNECT_TCP = 1L << 1; // ABI 4
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

  /** Whether a domain can refuse TCP binds and connects here (ABI 4, Linux 6.7), and if not why. */
  public static Availability tcpAvailability() {
    int abi = abi();
    return abi >= 4
        ? Availability.AVAILABLE
        : Availability.unavailable(
            abi <= 0
                ? availability().unavailabilityCause().orElse("no Landlock")
                : tcpUnavailability(abi));
  }

  private static String tcpUnavailability(int abi) {
    return "Landlock ABI " + abi + " cannot refuse TCP connects (ABI 4, Linux 6.7, is needed)";
  }

  /** Whether Landlock can be used here, and if not why (kernel too old, LSM not enabled). */
  public static Availability availability() {
    if (ABI > 0) {
      return Availability.AVAILABLE;
    }
    int errno = -ABI;
    if (errno == LibC.ENOSYS()) {
      return Availability.unavailable("the kernel has no Landlock (Linux 5.13 or newer is needed)");
    }
    if (errno == EOPNOTSUPP) {
      return Availability.unavailable(
          "Landlock is built into the kernel but not enabled (add landlock to the lsm= boot"
              + " parameter)");
    }
    return Availability.unavailable("Landlock probe failed: " + Syscalls.strerror(errno));
  }

  /**
   * Why confined children may not write at {@code path} (absolute, resolved), whatever a runner
   * asks: it lies in a device directory of this process's mount table ({@code /dev}, a devtmpfs or
   * devpts mount) and is not one of the few devices allowed there; empty when they may.
   */
  public static Optional<String> deviceDirectoryRefusal(String path) {
    String mountinfo;
    try {
      mountinfo = Files.readString(Path.of("/proc/self/mountinfo"));
    } catch (IOException e) {
      mountinfo = ""; // /dev alone is still known
    }
    return LandlockRules.refusal(Path.of(path), LandlockRules.deviceDirs(mountinfo));
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
  static long fileAccess(long handled) {
    return handled
        & (LibC.LANDLOCK_ACCESS_FS_READ_FILE()
            | LibC.LANDLOCK_ACCESS_FS_WRITE_FILE()
            | ACCESS_FS_TRUNCATE
            | ACCESS_FS_IOCTL_DEV);
  }

  private static final int ELOOP = 40; // x86-64 errno, absent from the bindings

  /**
   * A ruleset for the calling thread's children: reads everywhere but the device directories,
   * writes only beneath {@code writable}, both on the harmless devices and on {@code terminal} (see
   * {@link LandlockRules}), and on ABI 6 and newer the signal and abstract-socket scoping. Every
   * path is opened with no symbolic link followed anywhere along it (openat2 RESOLVE_NO_SYMLINKS,
   * Linux 5.6; before that only the last component is checked): the paths come resolved, so a link
   * found now was put there since, possibly by a confined child. Built before the thread gives up
   * its capabilities and user, so that permissions do not hide a path. Paths that do not exist are
   * skipped. With {@code noTcp} (ABI 4) it also refuses every TCP bind and connect.
   *
   * @return the ruleset's fd, for {@link #restrictSelf(int)}
   * @throws ConfinementException naming the call that failed and its errno
   */
  static int prepare(List<String> writable, String terminal, boolean noTcp) {
    int abi = abi();
    if (abi <= 0) {
      throw new ConfinementException(
          "landlock", availability().unavailabilityCause().orElse("unavailable"), 0);
    }
    if (noTcp && abi < 4) {
      throw new ConfinementException("landlock", tcpUnavailability(abi), 0);
    }
    long write = handledWriteAccess(abi);
    long read = LibC.LANDLOCK_ACCESS_FS_READ_FILE();
    long handled = write | read;
    List<LandlockRules.Rule> rules =
        LandlockRules.build(
            read,
            write,
            writable,
            terminal,
            LandlockRules.deviceDirs(ThreadNamespaces.readThreadMountInfo()));
    long scoped = abi >= 6 ? SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET : 0;
    try (Arena a = Arena.ofConfined()) {
      // struct landlock_ruleset_attr { u64 handled_access_fs; u64 handled_access_net (ABI 4);
      // u64 scoped (ABI 6); }: pass only the size this kernel knows.
      MemorySegment attr = a.allocate(24, 8);
      attr.set(ValueLayout.JAVA_LONG, 0, handled);
      attr.set(ValueLayout.JAVA_LONG, 8, noTcp ? ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP : 0L);
      attr.set(ValueLayout.JAVA_LONG, 16, scoped);
      long size = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
      int ruleset = Syscalls.landlockCreateRuleset(attr, size, 0);
      if (ruleset < 0) {
        throw new ConfinementException("landlock", "landlock_create_ruleset", -ruleset);
      }
      boolean ok = false;
      try {
        // struct landlock_path_beneath_attr { u64 allowed_access; s32 parent_fd; } __packed
        MemorySegment rule = a.allocate(12, 8);
        for (LandlockRules.Rule r : rules) {
          int fd = openNoSymlinks(r.path().toString());
          if (fd < 0) {
            if (-fd == LibC.ENOENT()) {
              continue;
            }
            throw new ConfinementException(
                "landlock",
                "open(O_PATH, no symbolic links) "
                    + r.path()
                    + (-fd == ELOOP ? " (a symbolic link has replaced a part of it)" : ""),
                -fd);
          }
          try {
            boolean dir = Files.isDirectory(r.path(), LinkOption.NOFOLLOW_LINKS);
            rule.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, dir ? r.access() : fileAccess(r.access()));
            rule.set(ValueLayout.JAVA_INT_UNALIGNED, 8, fd);
            int rc = Syscalls.landlockAddRule(ruleset, LibC.LANDLOCK_RULE_PATH_BENEATH(), rule);
            if (rc < 0) {
              throw new ConfinementException("landlock", "landlock_add_rule " + r.path(), -rc);
            }
          } finally {
            Syscalls.close(fd);
          }
        }
        ok = true;
        return ruleset;
      } finally {
        if (!ok) {
          Syscalls.close(ruleset);
        }
      }
    }
  }

  private static int openNoSymlinks(String path) {
    int flags = LibC.O_PATH() | LibC.O_CLOEXEC();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment p = a.allocateFrom(path);
      int fd = Syscalls.openat2(Syscalls.AT_FDCWD, p, flags, Syscalls.RESOLVE_NO_SYMLINKS);
      if (fd == -LibC.ENOSYS() || fd == -LibC.EPERM()) { // EPERM: an old container's filter
        fd = Syscalls.open(p, flags | LibC.O_NOFOLLOW());
      }
      return fd;
    }
  }

  /**
   * Restricts the calling thread (and what it spawns from now on) to the ruleset {@link #prepare}
   * made, and closes it. no_new_privs must already be set on this thread. Irreversible.
   *
   * @throws ConfinementException when landlock_restrict_self fails
   */
  static void restrictSelf(int ruleset) {
    try {
      int r = Syscalls.landlockRestrictSelf(ruleset);
      if (r < 0) {
        throw new ConfinementException("landlock", "landlock_restrict_self", -r);
      }
    } finally {
      Syscalls.close(ruleset);
    }
  }
}
