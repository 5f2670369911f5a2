package dev.confine.linux.confinement;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Syscalls;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * The credentials of a confinement thread, and so of everything it spawns: no capabilities at all,
 * and optionally another user. Capabilities, the bounding set, securebits and the user and group
 * ids are per thread in Linux; changing them with the raw system calls (never glibc's setuid
 * family, which makes every thread of the process follow) leaves the rest of the JVM as it was.
 *
 * <p>After {@link #dropAll}: the bounding, ambient, inheritable, permitted and effective sets are
 * empty, so an exec cannot grant a capability back (not even to uid 0: with an empty bounding and
 * inheritable set the file capabilities root gets at exec are masked to nothing), and, where this
 * JVM had CAP_SETPCAP, the securebits NOROOT and NO_CAP_AMBIENT_RAISE are set and locked. A child
 * running as root is then an ordinary user that happens to own root's files: it cannot set the
 * hostname, read the kernel log or another process's memory, inject input into a terminal that is
 * not its own (TIOCSTI needs CAP_SYS_ADMIN there) or override file permissions.
 */
public final class Credentials {
  private Credentials() {}

  /**
   * The user and group ids to run as.
   *
   * @param uid the user id (real, effective and saved)
   * @param gid the group id (real, effective and saved), also the only supplementary group
   */
  public record User(int uid, int gid) {
    /** Checks the ids. */
    public User {
      if (uid < 0 || gid < 0) {
        throw new IllegalArgumentException("uid and gid must not be negative: " + uid + ":" + gid);
      }
    }
  }

  // linux/prctl.h, linux/securebits.h, linux/capability.h
  static final int PR_CAPBSET_READ = 23;
  static final int PR_CAPBSET_DROP = 24;
  static final int PR_SET_SECUREBITS = 28;
  static final int PR_CAP_AMBIENT = 47;
  static final int PR_CAP_AMBIENT_CLEAR_ALL = 4;
  static final int SECBIT_NOROOT = 1;
  static final int SECBIT_NOROOT_LOCKED = 1 << 1;
  static final int SECBIT_NO_SETUID_FIXUP_LOCKED = 1 << 3; // fixup stays on: a uid change drops
  static final int SECBIT_KEEP_CAPS_LOCKED = 1 << 5; // KEEP_CAPS stays off
  static final int SECBIT_NO_CAP_AMBIENT_RAISE = 1 << 6;
  static final int SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED = 1 << 7;
  static final int SECUREBITS =
      SECBIT_NOROOT
          | SECBIT_NOROOT_LOCKED
          | SECBIT_NO_SETUID_FIXUP_LOCKED
          | SECBIT_KEEP_CAPS_LOCKED
          | SECBIT_NO_CAP_AMBIENT_RAISE
          | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  static final int CAP_SETPCAP = 8;
  private static final int LINUX_CAPABILITY_VERSION_3 = 0x20080522;

  /** The highest capability number this kernel knows (cap_last_cap), 40 on Linux 5.9 to 6.x. */
  static int lastCap() {
    // One read of the whole value: a sysctl file answers a read past its start with nothing, and
    // Files.readString reads a file /proc sizes at 0 one byte first ("40" came back as "4").
    try (InputStream in = Files.newInputStream(Path.of("/proc/sys/kernel/cap_last_cap"))) {
      return Integer.parseInt(new String(in.readNBytes(64), StandardCharsets.US_ASCII).strip());
    } catch (IOException | NumberFormatException e) {
      return 63; // the most a 64-bit set holds: PR_CAPBSET_DROP of an unknown one is EINVAL
    }
  }

  /**
   * Takes every capability from the calling thread and what it spawns, after switching it to {@code
   * user} when one is given: the bounding set and securebits first (they need CAP_SETPCAP), then
   * the group list and the group and user ids (they need CAP_SETGID and CAP_SETUID), then the
   * ambient, inheritable, permitted and effective sets. Without CAP_SETPCAP (a JVM that is not
   * root) the bounding set stays as it is; no_new_privs, set by the caller afterwards, then keeps
   * setuid and file-capability programs from granting any. Checked afterwards from {@code
   * /proc/thread-self/status}. Irreversible for the thread.
   *
   * @throws ConfinementException naming the call that failed, or the set that is not empty
   */
  static void dropAll(User user) {
    boolean boundingDropped = hasEffective(CAP_SETPCAP);
    if (boundingDropped) {
      int last = lastCap();
      for (int cap = 0; cap <= last; cap++) {
        int r = Syscalls.prctl(PR_CAPBSET_DROP, cap);
        if (r < 0 && -r != LibC.EINVAL()) {
          throw new ConfinementException("capabilities", "prctl(PR_CAPBSET_DROP, " + cap + ")", -r);
        }
      }
      int r = Syscalls.prctl(PR_SET_SECUREBITS, SECUREBITS);
      if (r < 0) {
        throw new ConfinementException("capabilities", "prctl(PR_SET_SECUREBITS)", -r);
      }
    }
    if (user != null) {
      switchTo(user);
    }
    int r = Syscalls.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL);
    if (r < 0 && -r != LibC.EINVAL()) { // EINVAL: a kernel before 4.3, which has no ambient set
      throw new ConfinementException("capabilities", "prctl(PR_CAP_AMBIENT_CLEAR_ALL)", -r);
    }
    try (Arena a = Arena.ofConfined()) {
      // struct __user_cap_header_struct { u32 version; int pid; }, two data structs
      // { u32 effective; u32 permitted; u32 inheritable; } of zeros.
      MemorySegment header = a.allocate(8, 4);
      header.set(ValueLayout.JAVA_INT, 0, LINUX_CAPABILITY_VERSION_3);
      header.set(ValueLayout.JAVA_INT, 4, 0);
      MemorySegment data = a.allocate(24, 4);
      r = Syscalls.capset(header, data);
      if (r < 0) {
        throw new ConfinementException("capabilities", "capset(all sets empty)", -r);
      }
    }
    verify(user, boundingDropped);
  }

  private static void switchTo(User user) {
    int r = Syscalls.setgroups(user.gid());
    if (r < 0) {
      throw new ConfinementException("user", "setgroups(" + user.gid() + ")", -r);
    }
    r = Syscalls.setresgid(user.gid());
    if (r < 0) {
      throw new ConfinementException("user", "setresgid(" + user.gid() + ")", -r);
    }
    r = Syscalls.setresuid(user.uid());
    if (r < 0) {
      throw new ConfinementException("user", "setresuid(" + user.uid() + ")", -r);
    }
  }

  private static boolean hasEffective(int cap) {
    try {
      long eff = Long.parseUnsignedLong(threadStatus().getOrDefault("CapEff", "0"), 16);
      return (eff & (1L << cap)) != 0;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /** Checks what the kernel reports for the calling thread against what was asked for. */
  private static void verify(User user, boolean boundingDropped) {
    Map<String, String> status = threadStatus();
    String[] sets =
        boundingDropped
            ? new String[] {"CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd"}
            : new String[] {"CapInh", "CapPrm", "CapEff", "CapAmb"};
    for (String set : sets) {
      String v = status.get(set);
      if (v != null && Long.parseUnsignedLong(v, 16) != 0) {
        throw new ConfinementException("capabilities", set + " is " + v + " after dropping", 0);
      }
    }
    if (user != null) {
      String expect = user.uid() + "\t" + user.uid() + "\t" + user.uid() + "\t" + user.uid();
      if (!expect.equals(status.get("Uid"))) {
        throw new ConfinementException(
            "user", "Uid is " + status.get("Uid") + " after setresuid", 0);
      }
    }
  }

  /** The calling thread's {@code /proc/thread-self/status} as name -> value. */
  static Map<String, String> threadStatus() {
    try {
      Map<String, String> out = new TreeMap<>();
      for (String line : Files.readAllLines(Path.of("/proc/thread-self/status"))) {
        int colon = line.indexOf(':');
        if (colon > 0) {
          out.put(line.substring(0, colon), line.substring(colon + 1).strip());
        }
      }
      return out;
    } catch (IOException e) {
      throw new ConfinementException("capabilities", "read /proc/thread-self/status: " + e, 0);
    }
  }

  /** The real user id of this process (the JVM's user). */
  public static int processUid() {
    try {
      return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    } catch (IOException | UnsupportedOperationException | ClassCastException e) {
      return -1;
    }
  }

  /**
   * Whether a confinement thread created by the calling thread can clear its bounding set: whether
   * this thread has CAP_SETPCAP in its effective set (root has it).
   */
  public static boolean canClearBoundingSet() {
    return hasEffective(CAP_SETPCAP);
  }
}
