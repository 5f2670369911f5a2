package dev.confine.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.libc.LibC;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The filter program, interpreted here row by row, for both variants: with AF_INET/AF_INET6 refused
 * (rootless) and without (inside a private network namespace). What the kernel does with it:
 * ConfinedRunnerTest and ConfinedNamespacesTest.
 */
@Tag("confinement")
class SeccompNetDenyTest {
  private static final int SOCKET = 41;
  private static final int OPENAT = 257;
  private static final int ARCH = LibC.AUDIT_ARCH_X86_64();
  private static final int EACCES = LibC.SECCOMP_RET_ERRNO() | LibC.EACCES();
  private static final int EPERM = LibC.SECCOMP_RET_ERRNO() | LibC.EPERM();
  private static final int ALLOW = LibC.SECCOMP_RET_ALLOW();

  /** A classic BPF interpreter for the few instructions the program uses. */
  private static int run(int[][] prog, int arch, int nr, int arg0) {
    int acc = 0;
    int pc = 0;
    while (true) {
      int[] row = prog[pc];
      int code = row[0];
      if (code == (LibC.BPF_LD() | LibC.BPF_W() | LibC.BPF_ABS())) {
        acc =
            switch (row[3]) {
              case 0 -> nr;
              case 4 -> arch;
              case 16 -> arg0;
              default -> throw new AssertionError("offset " + row[3]);
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
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void refusesWhatItShouldAndAllowsTheRest(boolean denyInet) {
    int[][] p = SeccompNetDeny.program(denyInet);
    int inet = denyInet ? EACCES : ALLOW;
    assertThat(run(p, ARCH, SOCKET, 2)).as("AF_INET").isEqualTo(inet);
    assertThat(run(p, ARCH, SOCKET, 10)).as("AF_INET6").isEqualTo(inet);
    assertThat(run(p, ARCH, SOCKET, 17)).as("AF_PACKET").isEqualTo(EACCES);
    assertThat(run(p, ARCH, SOCKET, 1)).as("AF_UNIX").isEqualTo(ALLOW);
    assertThat(run(p, ARCH, SOCKET, 16)).as("AF_NETLINK").isEqualTo(ALLOW);
    assertThat(run(p, ARCH, LibC.SYS_io_uring_setup(), 0)).as("io_uring").isEqualTo(EPERM);
    assertThat(run(p, ARCH, OPENAT, 2)).as("openat").isEqualTo(ALLOW);
    assertThat(run(p, ARCH, 0x40000000 | SOCKET, 2)).as("x32").isEqualTo(EACCES);
    assertThat(run(p, 0x40000003, SOCKET, 1)).as("i386").isEqualTo(LibC.SECCOMP_RET_KILL_PROCESS());
  }
}
