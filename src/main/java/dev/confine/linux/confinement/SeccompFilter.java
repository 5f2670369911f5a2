package dev.confine.linux.confinement;

import dev.confine.linux.confinement.ConfinementThreads.Network;
import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Availability;
import dev.confine.linux.sys.Syscalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * The classic-BPF seccomp filter of a confinement thread, installed without TSYNC (only the calling
 * thread, and what it spawns afterwards, is filtered), in every confined mode:
 *
 * <ul>
 *   <li><b>Other processes.</b> The calls that act on another process named by its pid, which
 *       Landlock's scoping (signals, abstract sockets, ptrace) does not cover, are refused with
 *       EPERM unless they name the caller itself (pid 0): {@code prlimit64}, {@code
 *       sched_setaffinity}, {@code sched_setscheduler}, {@code sched_setparam}, {@code
 *       sched_setattr}, {@code migrate_pages}, {@code move_pages}; {@code setpriority} and {@code
 *       ioprio_set} only for the caller's own process or process group (who 0), never for a whole
 *       user; {@code kcmp} always. The filter cannot know the caller's pid, so a program that names
 *       its own pid (or a thread's id) explicitly is refused too.
 *   <li><b>Terminals.</b> {@code ioctl(TIOCSTI)} (push input into a terminal) and {@code
 *       ioctl(TIOCLINUX)} (console selection and paste) are refused with EPERM on every fd.
 *   <li><b>Network</b> ({@link Network#SECCOMP}, rootless {@code DENY_ALL}): {@code socket} for any
 *       family but AF_UNIX fails with EACCES, and {@code io_uring_setup} with EPERM (io_uring could
 *       open sockets behind the filter's back). Inside a private network namespace ({@link
 *       Network#NAMESPACE}) AF_INET and AF_INET6 are kept as well (they reach only the namespace's
 *       loopback), and AF_NETLINK for NETLINK_ROUTE alone (it sees only the namespace's own
 *       interfaces: {@code ip addr} works); io_uring is refused there too. With the host's network
 *       ({@link Network#HOST}) sockets and io_uring are not filtered. With {@link
 *       Network#SUPERVISED} (rootless ALLOW_LIST and PROXY) AF_INET and AF_INET6 are kept for TCP
 *       alone ({@code SOCK_STREAM} with protocol 0 or {@code IPPROTO_TCP}: no UDP, SCTP, MPTCP or
 *       raw sockets) and AF_UNIX for stream and seqpacket sockets alone (in {@code socket} and
 *       {@code socketpair}: a datagram sent with an address reaches a socket no connect was decided
 *       for), every {@code connect} and {@code listen} waits for the {@link ConnectSupervisor} (a
 *       user notification), and {@code sendto}, {@code sendmsg} and {@code sendmmsg} with {@code
 *       MSG_FASTOPEN} (a connect inside a send) fail with EOPNOTSUPP. {@link Network#SECCOMP} and
 *       {@link Network#NAMESPACE} may be supervised too (DENY_ALL with the host's unix sockets
 *       decided): every {@code connect} waits for the supervisor and AF_UNIX keeps stream and
 *       seqpacket sockets alone, each family otherwise as unsupervised.
 *   <li><b>The ABI.</b> x32 system calls (whose numbers the rules above would not match) fail with
 *       EACCES; a foreign architecture (i386 through {@code int 0x80}) kills the process.
 * </ul>
 */
public final class SeccompFilter {
  private SeccompFilter() {}

  // x86-64 system call numbers (asm/unistd_64.h); the generated bindings carry only a few.
  static final int SYS_IOCTL = 16;
  static final int SYS_SOCKET = 41;
  static final int SYS_CONNECT = 42;
  static final int SYS_SENDTO = 44;
  static final int SYS_SENDMSG = 46;
  static final int SYS_LISTEN = 50;
  static final int SYS_SOCKETPAIR = 53;
  static final int SYS_SENDMMSG = 307;
  static final int SYS_SETPRIORITY = 141;
  static final int SYS_SCHED_SETPARAM = 142;
  static final int SYS_SCHED_SETSCHEDULER = 144;
  static final int SYS_SCHED_SETAFFINITY = 203;
  static final int SYS_IOPRIO_SET = 251;
  static final int SYS_MIGRATE_PAGES = 256;
  static final int SYS_MOVE_PAGES = 279;
  static final int SYS_PRLIMIT64 = 302;
  static final int SYS_KCMP = 312;
  static final int SYS_SCHED_SETATTR = 314;

  /** The system calls whose first argument is a pid that must be 0 (the caller). */
  static final List<Integer> SELF_ONLY =
      List.of(
          SYS_PRLIMIT64,
          SYS_SCHED_SETAFFINITY,
          SYS_SCHED_SETSCHEDULER,
          SYS_SCHED_SETPARAM,
          SYS_SCHED_SETATTR,
          SYS_MIGRATE_PAGES,
          SYS_MOVE_PAGES);

  static final int X32_SYSCALL_BIT = 0x40000000;
  static final int AF_UNIX = 1;
  static final int AF_INET = 2;
  static final int AF_INET6 = 10;
  static final int AF_NETLINK = 16;
  static final int NETLINK_ROUTE = 0;
  static final int SOCK_STREAM = 1;
  static final int SOCK_SEQPACKET = 5;
  static final int SOCK_NONBLOCK = 0x800;
  static final int SOCK_CLOEXEC = 0x80000;
  static final int IPPROTO_TCP = 6;

  /** The flags a socket type may carry, in every combination: a type is matched with each. */
  private static final int[] TYPE_FLAGS = {
    0, SOCK_NONBLOCK, SOCK_CLOEXEC, SOCK_NONBLOCK | SOCK_CLOEXEC
  };

  static final int MSG_FASTOPEN = 0x20000000;
  static final int EOPNOTSUPP = 95;
  static final int SECCOMP_GET_NOTIF_SIZES = 3;
  static final int FILTER_FLAG_NEW_LISTENER = 1 << 3;
  static final int FILTER_FLAG_WAIT_KILLABLE_RECV = 1 << 5; // Linux 5.19
  static final int PRIO_PROCESS = 0; // setpriority's which
  static final int PRIO_PGRP = 1;
  static final int IOPRIO_WHO_PROCESS = 1; // ioprio_set's which
  static final int IOPRIO_WHO_PGRP = 2;
  static final int TIOCSTI = 0x5412;
  static final int TIOCLINUX = 0x541C;

  // struct seccomp_data { int nr; u32 arch; u64 instruction_pointer; u64 args[6]; }: the low,
  // little-endian half of an argument is what the kernel reads for an int, pid_t or unsigned int.
  static final int OFFSET_NR = 0;
  static final int OFFSET_ARCH = 4;
  static final int OFFSET_ARG0 = 16;
  static final int OFFSET_ARG1 = 24;
  static final int OFFSET_ARG2 = 32;
  static final int OFFSET_ARG3 = 40;

  private static final Availability AVAILABILITY = probe();
  private static final Availability NOTIFICATION = probeNotification();

  private static Availability probe() {
    try (Arena a = Arena.ofConfined()) {
      for (int action : new int[] {LibC.SECCOMP_RET_ERRNO(), LibC.SECCOMP_RET_KILL_PROCESS()}) {
        MemorySegment act = a.allocateFrom(ValueLayout.JAVA_INT, action);
        int r = Syscalls.seccomp(LibC.SECCOMP_GET_ACTION_AVAIL(), 0, act);
        if (r < 0) {
          return Availability.unavailable(
              "seccomp filters are unavailable (kernel built without CONFIG_SECCOMP_FILTER, or"
                  + " too old): "
                  + Syscalls.strerror(-r));
        }
      }
      return Availability.AVAILABLE;
    } catch (LinkageError | RuntimeException e) {
      return Availability.unavailable("seccomp could not be probed: " + e);
    }
  }

  private static Availability probeNotification() {
    if (!AVAILABILITY.isAvailable()) {
      return AVAILABILITY;
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment act = a.allocateFrom(ValueLayout.JAVA_INT, LibC.SECCOMP_RET_USER_NOTIF());
      int r = Syscalls.seccomp(LibC.SECCOMP_GET_ACTION_AVAIL(), 0, act);
      if (r < 0) {
        return Availability.unavailable(
            "seccomp user notification is unavailable (Linux 5.0 or newer is needed): "
                + Syscalls.strerror(-r));
      }
      // struct seccomp_notif_sizes { u16 seccomp_notif, seccomp_notif_resp, seccomp_data; }
      MemorySegment sizes = a.allocate(6, 2);
      r = Syscalls.seccomp(SECCOMP_GET_NOTIF_SIZES, 0, sizes);
      if (r < 0) {
        return Availability.unavailable(
            "seccomp(SECCOMP_GET_NOTIF_SIZES) failed: " + Syscalls.strerror(-r));
      }
      return Availability.AVAILABLE;
    } catch (LinkageError | RuntimeException e) {
      return Availability.unavailable("seccomp user notification could not be probed: " + e);
    }
  }

  /**
   * Whether a filter can hand its calls to a supervisor here (SECCOMP_RET_USER_NOTIF and a
   * listener), and if not why.
   */
  public static Availability notificationAvailability() {
    return NOTIFICATION;
  }

  /** Whether the filter can be installed here, and if not why. */
  public static Availability availability() {
    return AVAILABILITY;
  }

  /** The socket families a child may open with {@code network}; null: every family. */
  public static List<String> socketFamilies(Network network) {
    return switch (network) {
      case HOST -> null;
      case SECCOMP -> List.of("AF_UNIX");
      case NAMESPACE -> List.of("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK (NETLINK_ROUTE)");
      case SUPERVISED -> List.of("AF_UNIX", "AF_INET (TCP)", "AF_INET6 (TCP)");
    };
  }

  /**
   * At {@code label}, a call of the form {@code (which, who, ...)}: allowed only for who 0 (the
   * caller) with which {@code process} or {@code group}.
   */
  private static void callerOnly(BpfProgram p, String label, int process, int group) {
    p.label(label)
        .load(OFFSET_ARG1)
        .jumpIfEqual(0, null, "eperm")
        .load(OFFSET_ARG0)
        .jumpIfEqual(process, "allow")
        .jumpIfEqual(group, "allow", "eperm");
  }

  /** The program for {@code network}, unsupervised (SUPERVISED: supervised), as rows. */
  static int[][] program(Network network) {
    return program(network, network == Network.SUPERVISED);
  }

  /**
   * The program for {@code network} as {code, jt, jf, k} rows; {@code supervised}: every connect
   * (and with SUPERVISED every listen) waits for the {@link ConnectSupervisor}, and AF_UNIX keeps
   * only its stream and seqpacket sockets.
   */
  static int[][] program(Network network, boolean supervised) {
    if (supervised ? network == Network.HOST : network == Network.SUPERVISED) {
      throw new IllegalArgumentException(network + (supervised ? " supervised" : " unsupervised"));
    }
    int allow = LibC.SECCOMP_RET_ALLOW();
    BpfProgram p = new BpfProgram();
    p.load(OFFSET_ARCH)
        .jumpIfEqual(LibC.AUDIT_ARCH_X86_64(), null, "kill")
        .load(OFFSET_NR)
        .jumpIfAnyBit(X32_SYSCALL_BIT, "eacces");
    for (int nr : SELF_ONLY) {
      p.jumpIfEqual(nr, "arg0 is 0");
    }
    p.jumpIfEqual(SYS_SETPRIORITY, "setpriority")
        .jumpIfEqual(SYS_IOPRIO_SET, "ioprio_set")
        .jumpIfEqual(SYS_KCMP, "eperm")
        .jumpIfEqual(SYS_IOCTL, "ioctl");
    if (network != Network.HOST) {
      p.jumpIfEqual(SYS_SOCKET, "socket").jumpIfEqual(LibC.SYS_io_uring_setup(), "eperm");
    }
    if (supervised) {
      p.jumpIfEqual(SYS_CONNECT, "notify").jumpIfEqual(SYS_SOCKETPAIR, "socketpair");
    }
    if (network == Network.SUPERVISED) {
      // listen binds an unbound TCP socket to a port of every address (which Landlock does not
      // check); in a namespace, or without inet sockets, it binds nothing beyond it.
      p.jumpIfEqual(SYS_LISTEN, "notify")
          .jumpIfEqual(SYS_SENDTO, "flags in arg3")
          .jumpIfEqual(SYS_SENDMMSG, "flags in arg3")
          .jumpIfEqual(SYS_SENDMSG, "flags in arg2");
    }
    p.ret(allow);

    p.label("arg0 is 0").load(OFFSET_ARG0).jumpIfEqual(0, "allow", "eperm");
    // setpriority(which, who, prio) and ioprio_set(which, who, ioprio): who 0 is the caller's own
    // process or process group; a whole user (which PRIO_USER, IOPRIO_WHO_USER) is never allowed,
    // since the JVM is one of the user's processes.
    callerOnly(p, "setpriority", PRIO_PROCESS, PRIO_PGRP);
    callerOnly(p, "ioprio_set", IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP);
    p.label("ioctl")
        .load(OFFSET_ARG1)
        .jumpIfEqual(TIOCSTI, "eperm")
        .jumpIfEqual(TIOCLINUX, "eperm", "allow");
    if (supervised) {
      // Unix sockets that need a connect to send (stream, seqpacket): a datagram sent with an
      // address (sendto, sendmsg) reaches a socket no connect was decided for.
      p.label("socket").load(OFFSET_ARG0).jumpIfEqual(AF_UNIX, "unix type", "not unix");
      p.label("socketpair").load(OFFSET_ARG0).jumpIfEqual(AF_UNIX, "unix type", "allow");
      p.label("unix type").load(OFFSET_ARG1);
      for (int flags : TYPE_FLAGS) {
        p.jumpIfEqual(SOCK_STREAM | flags, "allow").jumpIfEqual(SOCK_SEQPACKET | flags, "allow");
      }
      p.ret(LibC.SECCOMP_RET_ERRNO() | LibC.EACCES());
      p.label("not unix").load(OFFSET_ARG0);
    } else if (network != Network.HOST) {
      p.label("socket").load(OFFSET_ARG0).jumpIfEqual(AF_UNIX, "allow");
    }
    if (network != Network.HOST) {
      if (network == Network.NAMESPACE) {
        p.jumpIfEqual(AF_INET, "allow")
            .jumpIfEqual(AF_INET6, "allow")
            .jumpIfEqual(AF_NETLINK, null, "eacces")
            .load(OFFSET_ARG2)
            .jumpIfEqual(NETLINK_ROUTE, "allow", "eacces");
      } else if (network == Network.SUPERVISED) {
        // TCP alone: the type with or without its two flags, the protocol 0 or IPPROTO_TCP.
        p.jumpIfEqual(AF_INET, "inet").jumpIfEqual(AF_INET6, "inet", "eacces");
        p.label("inet").load(OFFSET_ARG1);
        for (int flags : TYPE_FLAGS) {
          p.jumpIfEqual(SOCK_STREAM | flags, "tcp");
        }
        p.ret(LibC.SECCOMP_RET_ERRNO() | LibC.EACCES());
        p.label("tcp")
            .load(OFFSET_ARG2)
            .jumpIfEqual(0, "allow")
            .jumpIfEqual(IPPROTO_TCP, "allow", "eacces");
      } else {
        p.ret(LibC.SECCOMP_RET_ERRNO() | LibC.EACCES());
      }
    }
    if (supervised) {
      p.label("notify").ret(LibC.SECCOMP_RET_USER_NOTIF());
    }
    if (network == Network.SUPERVISED) {
      p.label("flags in arg3").load(OFFSET_ARG3).jumpIfAnyBit(MSG_FASTOPEN, "eopnotsupp");
      p.ret(allow);
      p.label("flags in arg2").load(OFFSET_ARG2).jumpIfAnyBit(MSG_FASTOPEN, "eopnotsupp");
      p.ret(allow);
      p.label("eopnotsupp").ret(LibC.SECCOMP_RET_ERRNO() | EOPNOTSUPP);
    }
    p.label("allow").ret(allow);
    p.label("eperm").ret(LibC.SECCOMP_RET_ERRNO() | LibC.EPERM());
    p.label("eacces").ret(LibC.SECCOMP_RET_ERRNO() | LibC.EACCES());
    p.label("kill").ret(LibC.SECCOMP_RET_KILL_PROCESS());
    return p.assemble();
  }

  /**
   * Installs the filter for {@code network} on the calling thread. no_new_privs must already be
   * set. Irreversible.
   *
   * @param supervised whether connects wait for the supervisor (always with {@link
   *     Network#SUPERVISED}, never with {@link Network#HOST})
   * @return when supervised the filter's listener (the supervisor's to serve and close), else -1
   * @throws ConfinementException with the errno of the failed seccomp call
   */
  static int installOnThisThread(Network network, boolean supervised) {
    int[][] prog = program(network, supervised);
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
      if (!supervised) {
        int r = Syscalls.seccomp(LibC.SECCOMP_SET_MODE_FILTER(), 0, fprog);
        if (r < 0) {
          throw new ConfinementException("seccomp", "seccomp(SECCOMP_SET_MODE_FILTER)", -r);
        }
        return -1;
      }
      // A child whose call the supervisor has taken waits for its answer through every signal but
      // a fatal one (Linux 5.19): otherwise a signal (a Go runtime preempts with SIGURG all the
      // time) cancels the call after the supervisor may have connected the socket, and the
      // restarted call finds it connected.
      int flags = FILTER_FLAG_NEW_LISTENER | FILTER_FLAG_WAIT_KILLABLE_RECV;
      int r = Syscalls.seccomp(LibC.SECCOMP_SET_MODE_FILTER(), flags, fprog);
      if (r == -LibC.EINVAL()) {
        r = Syscalls.seccomp(LibC.SECCOMP_SET_MODE_FILTER(), FILTER_FLAG_NEW_LISTENER, fprog);
      }
      if (r < 0) {
        throw new ConfinementException(
            "seccomp", "seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER)", -r);
      }
      return r;
    }
  }
}
