package dev.confine.linux;

import dev.confine.linux.libc.LibC;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A classic-BPF seccomp filter that denies network sockets to the calling thread and what it spawns
 * afterwards: {@code socket(AF_INET | AF_INET6 | AF_PACKET, ...)} fails with EACCES, {@code
 * io_uring_setup} with EPERM (io_uring could open sockets behind the filter's back), the x32 ABI
 * with EACCES, and a foreign architecture kills the process. AF_UNIX and everything else is
 * allowed. Installed without TSYNC: only the calling thread is filtered. Inside a private network
 * namespace a variant lets AF_INET and AF_INET6 through (they reach only the namespace's loopback)
 * and refuses the rest as above.
 */
public final class SeccompNetDeny {
  private SeccompNetDeny() {}

  private static final int SYS_SOCKET = 41; // x86-64
  private static final int X32_SYSCALL_BIT = 0x40000000;
  private static final int AF_INET = 2;
  private static final int AF_INET6 = 10;
  private static final int AF_PACKET = 17;
  private static final int OFFSET_NR = 0; // struct seccomp_data
  private static final int OFFSET_ARCH = 4;
  private static final int OFFSET_ARG0_LOW = 16; // little-endian low half of args[0]

  private static final Optional<String> CAUSE = probe();

  private static Optional<String> probe() {
    try (Arena a = Arena.ofConfined()) {
      for (int action : new int[] {LibC.SECCOMP_RET_ERRNO(), LibC.SECCOMP_RET_KILL_PROCESS()}) {
        MemorySegment act = a.allocateFrom(ValueLayout.JAVA_INT, action);
        int r = Syscalls.seccomp(LibC.SECCOMP_GET_ACTION_AVAIL(), 0, act);
        if (r < 0) {
          return Optional.of(
              "seccomp filters are unavailable (kernel built without CONFIG_SECCOMP_FILTER, or"
                  + " too old): "
                  + Syscalls.strerror(-r));
        }
      }
      return Optional.empty();
    } catch (LinkageError | RuntimeException e) {
      return Optional.of("seccomp could not be probed: " + e);
    }
  }

  /** Whether the filter can be installed here. */
  public static boolean isAvailable() {
    return CAUSE.isEmpty();
  }

  /** Why the filter cannot be installed here, or empty. */
  public static Optional<String> unavailabilityCause() {
    return CAUSE;
  }

  private static final int LD_ABS = LibC.BPF_LD() | LibC.BPF_W() | LibC.BPF_ABS();
  private static final int JEQ = LibC.BPF_JMP() | LibC.BPF_JEQ() | LibC.BPF_K();
  private static final int JSET = LibC.BPF_JMP() | LibC.BPF_JSET() | LibC.BPF_K();
  private static final int RET = LibC.BPF_RET() | LibC.BPF_K();

  /**
   * The program, as {code, jt, jf, k} rows; jumps are relative to the next instruction. With {@code
   * denyInet} false (inside a private network namespace, where AF_INET reaches only the namespace's
   * loopback) only AF_PACKET sockets are refused; io_uring and the x32 ABI are refused either way.
   */
  static int[][] program(boolean denyInet) {
    int allow = LibC.SECCOMP_RET_ALLOW();
    int eacces = LibC.SECCOMP_RET_ERRNO() | LibC.EACCES();
    int eperm = LibC.SECCOMP_RET_ERRNO() | LibC.EPERM();
    int[] families = denyInet ? new int[] {AF_INET, AF_INET6, AF_PACKET} : new int[] {AF_PACKET};
    int n = families.length;
    int refuseAccess = 10 + n; // the row returning EACCES
    int refusePerm = 11 + n; // the row returning EPERM
    List<int[]> p = new ArrayList<>();
    p.add(new int[] {LD_ABS, 0, 0, OFFSET_ARCH}); // 0
    p.add(new int[] {JEQ, 1, 0, LibC.AUDIT_ARCH_X86_64()}); // 1
    p.add(new int[] {RET, 0, 0, LibC.SECCOMP_RET_KILL_PROCESS()}); // 2
    p.add(new int[] {LD_ABS, 0, 0, OFFSET_NR}); // 3
    p.add(new int[] {JSET, refuseAccess - 5, 0, X32_SYSCALL_BIT}); // 4
    p.add(new int[] {JEQ, 2, 0, SYS_SOCKET}); // 5 -> 8
    p.add(new int[] {JEQ, refusePerm - 7, 0, LibC.SYS_io_uring_setup()}); // 6
    p.add(new int[] {RET, 0, 0, allow}); // 7
    p.add(new int[] {LD_ABS, 0, 0, OFFSET_ARG0_LOW}); // 8
    for (int i = 0; i < n; i++) {
      p.add(new int[] {JEQ, refuseAccess - (10 + i), 0, families[i]}); // 9 .. 8+n
    }
    p.add(new int[] {RET, 0, 0, allow}); // 9+n
    p.add(new int[] {RET, 0, 0, eacces}); // 10+n
    p.add(new int[] {RET, 0, 0, eperm}); // 11+n
    return p.toArray(int[][]::new);
  }

  /**
   * Installs the filter on the calling thread. no_new_privs must already be set. Irreversible.
   *
   * @param denyInet whether AF_INET and AF_INET6 sockets are refused too (see {@link #program})
   * @throws ConfinementException with the errno of the failed seccomp call
   */
  static void installOnThisThread(boolean denyInet) {
    int[][] prog = program(denyInet);
    try (Arena a = Arena.ofConfined()) {
      // struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }
      MemorySegment filter = a.allocate(8L * prog.length, 8);
      for (int i = 0; i < prog.length; i++) {
        long o = 8L * i;
        filter.set(ValueLayout.JAVA_SHORT, o, (short) prog[i][0]);
        filter.set(ValueLayout.JAVA_BYTE, o + 2, (byte) prog[i][1]);
        filter.set(ValueLayout.JAVA_BYTE, o + 3, (byte) prog[i][2]);
        filter.set(ValueLayout.JAVA_INT, o + 4, prog[i][3]);
      }
      // struct sock_fprog { unsigned short len; struct sock_filter *filter; }
      MemorySegment fprog = a.allocate(16, 8);
      fprog.set(ValueLayout.JAVA_SHORT, 0, (short) prog.length);
      fprog.set(ValueLayout.ADDRESS, 8, filter);
      int r = Syscalls.seccomp(LibC.SECCOMP_SET_MODE_FILTER(), 0, fprog);
      if (r < 0) {
        throw new ConfinementException("seccomp", "seccomp(SECCOMP_SET_MODE_FILTER)", -r);
      }
    }
  }
}
