package dev.confine.linux.confinement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.confinement.ConfinementThreads.Network;
import dev.confine.linux.libc.LibC;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The filter program, interpreted here row by row, for each network mode. What the kernel does with
 * it: ConfinedBoundaryTest, ConfinedRunnerTest and ConfinedNamespacesTest.
 */
@Tag("confinement")
class SeccompFilterTest {
  private static final int OPENAT = 257;
  private static final int GETPID = 39;
  private static final int ARCH = LibC.AUDIT_ARCH_X86_64();
  private static final int EACCES = LibC.SECCOMP_RET_ERRNO() | LibC.EACCES();
  private static final int EPERM = LibC.SECCOMP_RET_ERRNO() | LibC.EPERM();
  private static final int ALLOW = LibC.SECCOMP_RET_ALLOW();
  private static final int KILL = LibC.SECCOMP_RET_KILL_PROCESS();
  private static final int JVM = (int) ProcessHandle.current().pid();

  /** A classic BPF interpreter for the few instructions the program uses. */
  private static int run(int[][] prog, int arch, int nr, long... args) {
    int acc = 0;
    int pc = 0;
    int steps = 0;
    while (steps++ < prog.length) { // every jump goes forward
      int[] row = prog[pc];
      int code = row[0];
      if (code == (LibC.BPF_LD() | LibC.BPF_W() | LibC.BPF_ABS())) {
        int off = row[3];
        acc =
            switch (off) {
              case 0 -> nr;
              case 4 -> arch;
              default -> {
                int i = (off - 16) / 8;
                long a = i < args.length ? args[i] : 0;
                yield (off - 16) % 8 == 0 ? (int) a : (int) (a >>> 32);
              }
            };
        pc++;
      } else if (code == (LibC.BPF_JMP() | LibC.BPF_JEQ() | LibC.BPF_K())) {
        pc += 1 + (acc == row[3] ? row[1] : row[2]);
      } else if (code == (LibC.BPF_JMP() | LibC.BPF_JSET() | LibC.BPF_K())) {
        pc += 1 + ((acc & row[3]) != 0 ? row[1] : row[2]);
      } else if (code == (LibC.BPF_RET() | LibC.BPF_K())) {
        return row[3];
      } else {
        throw new AssertionError("code " + code);
      }
    }
    throw new AssertionError("no return");
  }

  @ParameterizedTest
  @EnumSource(Network.class)
  void callsOnAnotherProcessAreRefusedInEveryMode(Network network) {
    int[][] p = SeccompFilter.program(network);
    for (int nr : SeccompFilter.SELF_ONLY) {
      assertThat(run(p, ARCH, nr, 0)).as("nr %d on itself", nr).isEqualTo(ALLOW);
      assertThat(run(p, ARCH, nr, JVM)).as("nr %d on the JVM", nr).isEqualTo(EPERM);
      assertThat(run(p, ARCH, nr, 1)).as("nr %d on init", nr).isEqualTo(EPERM);
      assertThat(run(p, ARCH, nr, -1)).as("nr %d on -1", nr).isEqualTo(EPERM);
      // the kernel reads a pid_t: only the low half counts, as here
      assertThat(run(p, ARCH, nr, 1L << 32)).as("nr %d high half", nr).isEqualTo(ALLOW);
    }
    int prio = SeccompFilter.SYS_SETPRIORITY;
    assertThat(run(p, ARCH, prio, SeccompFilter.PRIO_PROCESS, 0)).isEqualTo(ALLOW);
    assertThat(run(p, ARCH, prio, SeccompFilter.PRIO_PGRP, 0)).isEqualTo(ALLOW);
    assertThat(run(p, ARCH, prio, SeccompFilter.PRIO_PROCESS, JVM)).isEqualTo(EPERM);
    assertThat(run(p, ARCH, prio, SeccompFilter.PRIO_PGRP, JVM)).isEqualTo(EPERM);
    assertThat(run(p, ARCH, prio, 2 /* PRIO_USER */, 0)).as("a whole user").isEqualTo(EPERM);
    int io = SeccompFilter.SYS_IOPRIO_SET;
    assertThat(run(p, ARCH, io, SeccompFilter.IOPRIO_WHO_PROCESS, 0)).isEqualTo(ALLOW);
    assertThat(run(p, ARCH, io, SeccompFilter.IOPRIO_WHO_PGRP, 0)).isEqualTo(ALLOW);
    assertThat(run(p, ARCH, io, SeccompFilter.IOPRIO_WHO_PROCESS, JVM)).isEqualTo(EPERM);
    assertThat(run(p, ARCH, io, 3 /* IOPRIO_WHO_USER */, 0)).as("a whole user").isEqualTo(EPERM);
    assertThat(run(p, ARCH, SeccompFilter.SYS_KCMP, 0, 0)).isEqualTo(EPERM);
    assertThat(run(p, ARCH, SeccompFilter.SYS_KCMP, JVM, JVM)).isEqualTo(EPERM);
  }

  @ParameterizedTest
  @EnumSource(Network.class)
  void terminalInjectionIsRefusedAndOtherIoctlsPass(Network network) {
    int[][] p = SeccompFilter.program(network);
    int ioctl = SeccompFilter.SYS_IOCTL;
    assertThat(run(p, ARCH, ioctl, 0, SeccompFilter.TIOCSTI)).isEqualTo(EPERM);
    assertThat(run(p, ARCH, ioctl, 5, SeccompFilter.TIOCLINUX)).isEqualTo(EPERM);
    assertThat(run(p, ARCH, ioctl, 0, 0x5401 /* TCGETS */)).isEqualTo(ALLOW);
    assertThat(run(p, ARCH, ioctl, 0, 0x5414 /* TIOCSWINSZ */)).isEqualTo(ALLOW);
  }

  @ParameterizedTest
  @EnumSource(Network.class)
  void theAbiIsChecked(Network network) {
    int[][] p = SeccompFilter.program(network);
    assertThat(run(p, ARCH, 0x40000000 | SeccompFilter.SYS_PRLIMIT64, JVM))
        .as("x32")
        .isEqualTo(EACCES);
    assertThat(run(p, 0x40000003, GETPID)).as("i386").isEqualTo(KILL);
    assertThat(run(p, ARCH, OPENAT, 0)).as("openat").isEqualTo(ALLOW);
    assertThat(run(p, ARCH, GETPID)).as("getpid").isEqualTo(ALLOW);
  }

  @Test
  void denyAllWithoutANamespaceAllowsUnixSocketsOnly() {
    int[][] p = SeccompFilter.program(Network.SECCOMP);
    int socket = SeccompFilter.SYS_SOCKET;
    assertThat(run(p, ARCH, socket, 1)).as("AF_UNIX").isEqualTo(ALLOW);
    for (int family = 0; family < 64; family++) {
      if (family != 1) {
        assertThat(run(p, ARCH, socket, family)).as("family %d", family).isEqualTo(EACCES);
      }
    }
    assertThat(run(p, ARCH, LibC.SYS_io_uring_setup(), 0)).as("io_uring").isEqualTo(EPERM);
  }

  @Test
  void denyAllInANamespaceAlsoAllowsInet() {
    int[][] p = SeccompFilter.program(Network.NAMESPACE);
    int socket = SeccompFilter.SYS_SOCKET;
    for (int family = 0; family < 64; family++) {
      int expected = family == 1 || family == 2 || family == 10 ? ALLOW : EACCES;
      if (family != 16) {
        assertThat(run(p, ARCH, socket, family)).as("family %d", family).isEqualTo(expected);
      }
    }
    // netlink: NETLINK_ROUTE alone (per namespace); not audit, uevents, generic, sock_diag, ...
    assertThat(run(p, ARCH, socket, 16, 3, 0)).as("NETLINK_ROUTE").isEqualTo(ALLOW);
    for (int protocol = 1; protocol < 32; protocol++) {
      assertThat(run(p, ARCH, socket, 16, 3, protocol))
          .as("netlink %d", protocol)
          .isEqualTo(EACCES);
    }
    assertThat(run(p, ARCH, LibC.SYS_io_uring_setup(), 0)).as("io_uring").isEqualTo(EPERM);
  }

  @Test
  void theHostsNetworkLeavesSocketsAlone() {
    int[][] p = SeccompFilter.program(Network.HOST);
    for (int family = 0; family < 64; family++) {
      assertThat(run(p, ARCH, SeccompFilter.SYS_SOCKET, family)).isEqualTo(ALLOW);
    }
    assertThat(run(p, ARCH, LibC.SYS_io_uring_setup(), 0)).isEqualTo(ALLOW);
  }

  /**
   * Supervised: TCP alone on AF_INET and AF_INET6, whatever the flags; every connect and listen to
   * the supervisor, whatever its arguments; fast open in any send refused, other sends pass.
   */
  @Test
  void supervisedKeepsTcpAndHandsConnectsToTheSupervisor() {
    int[][] p = SeccompFilter.program(Network.SUPERVISED);
    int socket = SeccompFilter.SYS_SOCKET;
    int stream = SeccompFilter.SOCK_STREAM;
    for (int family : new int[] {SeccompFilter.AF_INET, SeccompFilter.AF_INET6}) {
      for (int flags : new int[] {0, 0x800, 0x80000, 0x80800}) {
        assertThat(run(p, ARCH, socket, family, stream | flags, 0)).isEqualTo(ALLOW);
        assertThat(run(p, ARCH, socket, family, stream | flags, 6)).isEqualTo(ALLOW);
        assertThat(run(p, ARCH, socket, family, stream | flags, 132)).as("SCTP").isEqualTo(EACCES);
        assertThat(run(p, ARCH, socket, family, stream | flags, 262)).as("MPTCP").isEqualTo(EACCES);
        for (int type = 2; type <= 10; type++) {
          assertThat(run(p, ARCH, socket, family, type | flags, 0))
              .as("type %d", type)
              .isEqualTo(EACCES);
        }
      }
      assertThat(run(p, ARCH, socket, family, stream | 0x100, 0))
          .as("other bits")
          .isEqualTo(EACCES);
    }
    int pair = SeccompFilter.SYS_SOCKETPAIR;
    for (int flags : new int[] {0, 0x800, 0x80000, 0x80800}) {
      for (int nr : new int[] {socket, pair}) {
        assertThat(run(p, ARCH, nr, SeccompFilter.AF_UNIX, stream | flags, 0)).isEqualTo(ALLOW);
        assertThat(run(p, ARCH, nr, SeccompFilter.AF_UNIX, 5 | flags, 0)).isEqualTo(ALLOW);
        assertThat(run(p, ARCH, nr, SeccompFilter.AF_UNIX, 2 | flags, 0))
            .as("datagram")
            .isEqualTo(EACCES);
      }
    }
    assertThat(run(p, ARCH, pair, SeccompFilter.AF_INET, stream, 0))
        .as("the kernel's to refuse")
        .isEqualTo(ALLOW);
    // Elsewhere unix datagrams stay.
    for (Network n : List.of(Network.HOST, Network.SECCOMP, Network.NAMESPACE)) {
      assertThat(run(SeccompFilter.program(n), ARCH, socket, SeccompFilter.AF_UNIX, 2, 0))
          .isEqualTo(ALLOW);
    }
    for (int family : new int[] {SeccompFilter.AF_NETLINK, 17 /* AF_PACKET */, 40 /* VSOCK */}) {
      assertThat(run(p, ARCH, socket, family, stream, 0)).isEqualTo(EACCES);
    }
    int notify = LibC.SECCOMP_RET_USER_NOTIF();
    assertThat(run(p, ARCH, SeccompFilter.SYS_CONNECT, 3, 0x1000, 16)).isEqualTo(notify);
    assertThat(run(p, ARCH, SeccompFilter.SYS_CONNECT)).isEqualTo(notify);
    assertThat(run(p, ARCH, SeccompFilter.SYS_LISTEN, 3, 5)).isEqualTo(notify);
    int fastOpen = SeccompFilter.MSG_FASTOPEN;
    int refused = LibC.SECCOMP_RET_ERRNO() | SeccompFilter.EOPNOTSUPP;
    assertThat(run(p, ARCH, SeccompFilter.SYS_SENDTO, 3, 0, 1, fastOpen, 0x1000, 16))
        .isEqualTo(refused);
    assertThat(run(p, ARCH, SeccompFilter.SYS_SENDMMSG, 3, 0, 1, fastOpen | 0x40))
        .isEqualTo(refused);
    assertThat(run(p, ARCH, SeccompFilter.SYS_SENDMSG, 3, 0, fastOpen)).isEqualTo(refused);
    assertThat(run(p, ARCH, SeccompFilter.SYS_SENDTO, 3, 0, 1, 0x40, 0x1000, 16)).isEqualTo(ALLOW);
    assertThat(run(p, ARCH, SeccompFilter.SYS_SENDMSG, 3, 0, 0x4000)).isEqualTo(ALLOW);
    assertThat(run(p, ARCH, LibC.SYS_io_uring_setup(), 0)).isEqualTo(EPERM);
    // Other modes do not notify.
    for (Network n : List.of(Network.HOST, Network.SECCOMP, Network.NAMESPACE)) {
      assertThat(run(SeccompFilter.program(n), ARCH, SeccompFilter.SYS_CONNECT, 3, 0, 16))
          .isEqualTo(ALLOW);
    }
  }

  /**
   * DENY_ALL supervised (the host's unix sockets decided): each family as unsupervised, every
   * connect to the supervisor, AF_UNIX without datagrams (in socket and socketpair); listen and
   * sends as unsupervised. HOST cannot be supervised, SUPERVISED cannot be anything else.
   */
  @Test
  void denyAllSupervisedHandsConnectsToTheSupervisorAndRefusesUnixDatagrams() {
    int notify = LibC.SECCOMP_RET_USER_NOTIF();
    int socket = SeccompFilter.SYS_SOCKET;
    int stream = SeccompFilter.SOCK_STREAM;
    for (Network n : List.of(Network.SECCOMP, Network.NAMESPACE)) {
      int[][] p = SeccompFilter.program(n, true);
      assertThat(run(p, ARCH, SeccompFilter.SYS_CONNECT, 3, 0x1000, 110)).isEqualTo(notify);
      assertThat(run(p, ARCH, SeccompFilter.SYS_LISTEN, 3, 5)).isEqualTo(ALLOW);
      assertThat(run(p, ARCH, SeccompFilter.SYS_SENDTO, 3, 0, 1, 0, 0x1000, 16)).isEqualTo(ALLOW);
      for (int nr : new int[] {socket, SeccompFilter.SYS_SOCKETPAIR}) {
        for (int flags : new int[] {0, 0x800, 0x80000, 0x80800}) {
          assertThat(run(p, ARCH, nr, SeccompFilter.AF_UNIX, stream | flags, 0)).isEqualTo(ALLOW);
          assertThat(run(p, ARCH, nr, SeccompFilter.AF_UNIX, 5 | flags, 0)).isEqualTo(ALLOW);
          assertThat(run(p, ARCH, nr, SeccompFilter.AF_UNIX, 2 | flags, 0))
              .as("%s datagram", n)
              .isEqualTo(EACCES);
        }
      }
      int inet = n == Network.NAMESPACE ? ALLOW : EACCES;
      assertThat(run(p, ARCH, socket, SeccompFilter.AF_INET, stream, 0)).isEqualTo(inet);
      assertThat(run(p, ARCH, socket, SeccompFilter.AF_INET6, 2, 0)).as("UDP").isEqualTo(inet);
      assertThat(run(p, ARCH, socket, 17 /* AF_PACKET */, stream, 0)).isEqualTo(EACCES);
      assertThat(run(p, ARCH, LibC.SYS_io_uring_setup(), 0)).isEqualTo(EPERM);
    }
    assertThatThrownBy(() -> SeccompFilter.program(Network.HOST, true))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SeccompFilter.program(Network.SUPERVISED, false))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theFamiliesAreReported() {
    assertThat(SeccompFilter.socketFamilies(Network.SECCOMP)).containsExactly("AF_UNIX");
    assertThat(SeccompFilter.socketFamilies(Network.NAMESPACE))
        .containsExactly("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK (NETLINK_ROUTE)");
    assertThat(SeccompFilter.socketFamilies(Network.HOST)).isNull();
  }
}
