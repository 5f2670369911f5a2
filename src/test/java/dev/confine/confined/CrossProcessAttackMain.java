package dev.confine.confined;

import dev.confine.ExecResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;

/**
 * Run in a JVM of its own by {@link ConfinedBoundaryTest}: a confined child (mode: the first
 * argument, see {@link ConfinedModes}) calls, on this JVM (its parent), every system call that acts
 * on another process by pid and that Landlock's scoping does not cover, then on itself; this JVM
 * prints what each call returned and then what it finds of itself afterwards (its CPU limit, nice
 * value, scheduling policy, I/O priority), and "alive" last. A call that got through can kill this
 * JVM (RLIMIT_CPU of one second), which is why it is not the test's own.
 */
final class CrossProcessAttackMain {
  private CrossProcessAttackMain() {}

  static final String ATTACK =
      String.join(
          "\n",
          "import ctypes, errno, os",
          "libc = ctypes.CDLL(None, use_errno=True)",
          "L = ctypes.c_long",
          "def call(name, nr, *args):",
          "    ctypes.set_errno(0)",
          "    r = libc.syscall(L(nr), *[a if not isinstance(a, int) else L(a) for a in args])",
          "    e = ctypes.get_errno()",
          "    print(name, 'ok' if r >= 0 else errno.errorcode.get(e, str(e)), flush=True)",
          "class rlimit(ctypes.Structure):",
          "    _fields_ = [('cur', ctypes.c_ulong), ('max', ctypes.c_ulong)]",
          "target = int(os.environ.get('TARGET') or os.getppid())",
          "one = rlimit(1, 1)",
          "mask = ctypes.c_ulong(1)",
          "param = ctypes.c_int(0)",
          "attr = (ctypes.c_uint32 * 14)(56, 5)",
          "nodes = ctypes.c_ulong(1)",
          "call('prlimit64', 302, target, 0, ctypes.byref(one), None)",
          "call('setpriority', 141, 0, target, 19)",
          "call('setpriority-pgrp', 141, 1, target, 19)",
          // A user with no processes: refused by the filter (EPERM) or, were it let through, ESRCH
          // from the kernel; the user's own processes (0: the caller's uid) would all be reniced.
          "call('setpriority-user', 141, 2, 54321, 19)",
          "call('sched_setaffinity', 203, target, 8, ctypes.byref(mask))",
          "call('sched_setscheduler', 144, target, 5, ctypes.byref(param))",
          "call('sched_setparam', 142, target, ctypes.byref(param))",
          "call('sched_setattr', 314, target, ctypes.byref(attr), 0)",
          "call('ioprio_set', 251, 1, target, 3 << 13)",
          "call('ioprio_set-user', 251, 3, 54321, 3 << 13)",
          "call('migrate_pages', 256, target, 64, ctypes.byref(nodes), ctypes.byref(nodes))",
          "call('move_pages', 279, target, 0, None, None, None, 0)",
          "call('kcmp', 312, target, os.getpid(), 0, 0, 0)",
          "mine = rlimit(0, 0)",
          "call('self-prlimit64', 302, 0, 0, None, ctypes.byref(mine))",
          "call('self-setpriority', 141, 0, 0, os.getpriority(os.PRIO_PROCESS, 0))",
          "call('self-sched_setaffinity', 203, 0, 8, ctypes.byref(mask))",
          "");

  /** The calls made on the parent, each of which must be refused. */
  static final List<String> ON_PARENT =
      List.of(
          "prlimit64",
          "setpriority",
          "setpriority-pgrp",
          "setpriority-user",
          "sched_setaffinity",
          "sched_setscheduler",
          "sched_setparam",
          "sched_setattr",
          "ioprio_set",
          "ioprio_set-user",
          "migrate_pages",
          "move_pages",
          "kcmp");

  public static void main(String[] args) throws IOException {
    Path root = Files.createTempDirectory("confine-attack-");
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxrwxrwx"));
    try {
      // The host may run this JVM niced (a CI runner under nice 19): what the child must not
      // change is what it found.
      System.out.println("before " + niceAndPolicy());
      ConfinedRunner runner = ConfinedModes.named(args[0]).runner(root);
      ExecResult r =
          runner.exec(
              ConfinedModes.PYTHON, List.of("-c", ATTACK), ConfinedModes.named(args[0]).options());
      System.out.print(r.stdoutText());
      System.out.println("child-exit " + r.exitCode() + " " + r.stderrText().strip());
      // Give a CPU limit that got through a moment to strike.
      long end = System.nanoTime() + 1_500_000_000L;
      long spin = 0;
      while (System.nanoTime() < end) {
        spin++;
      }
      Path self = Path.of("/proc/self");
      String cpu =
          Files.readAllLines(self.resolve("limits")).stream()
              .filter(l -> l.startsWith("Max cpu time"))
              .findFirst()
              .orElse("?");
      System.out.println("cpu-limit " + cpu.replaceAll("\\s+", " "));
      System.out.println("after " + niceAndPolicy());
      System.out.println("spun " + (spin > 0));
      System.out.println("alive");
    } finally {
      try (var files = Files.walk(root)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** This process's nice value and scheduling policy, from /proc/self/stat. */
  private static String niceAndPolicy() throws IOException {
    String[] stat = Files.readString(Path.of("/proc/self/stat")).split("\\) ", 2)[1].split(" ");
    return "nice " + stat[16] + " policy " + stat[38];
  }
}
