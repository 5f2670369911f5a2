package dev.confine.linux.spawn;

import static dev.confine.testing.NativeFds.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ByteStrings;
import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.siginfo_t;
import dev.confine.linux.libc.sigset_t;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.sys.Syscalls;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.JvmChildren;
import dev.confine.testing.NativeFds;
import dev.confine.testing.OpenFds;
import dev.confine.testing.RawBytes;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Spawner}'s contract, seen from the child and from the parent: the bytes of argv and the
 * environment, the working directory (by path and by open fd), stdio, the session, signals, that no
 * other fd of the JVM reaches the child, the pidfd, and how a spawn fails (the errno, and nothing
 * left open or unreaped).
 */
@Timeout(120)
@SuppressWarnings("restricted")
class SpawnerTest {
  private static final List<String> ENV = List.of("PATH=/usr/bin:/bin", "LC_ALL=C");
  private static final int F_DUPFD = 0;

  @TempDir Path tmp;

  @BeforeEach
  void engine() {
    HostRequirements.require(NativeAccess.availability());
  }

  /**
   * A spawned child: its outputs, its exit; on close killed with its process group (when it was not
   * reaped yet), reaped, and the parent's fds closed.
   */
  private static final class Child implements AutoCloseable {
    final Spawner.Spawned s;
    private boolean stdinClosed;
    private ExitStatus status;

    Child(Spawner.Spawned s) {
      this.s = s;
    }

    static Child spawn(SpawnSpec spec) {
      return new Child(Spawner.spawn(spec));
    }

    int pid() {
      return s.pid();
    }

    void write(byte[] bytes) {
      NativeFds.writeFully(s.stdinFd(), bytes);
    }

    void closeStdin() {
      if (!stdinClosed && s.stdinFd() >= 0) {
        Syscalls.close(s.stdinFd());
      }
      stdinClosed = true;
    }

    /** Stdout to its end; stderr must be small enough for the pipe (read after). */
    byte[] stdout() {
      return NativeFds.readToEnd(s.stdoutFd(), WAIT);
    }

    String stdoutText() {
      return new String(stdout(), StandardCharsets.UTF_8);
    }

    String stderrText() {
      return new String(NativeFds.readToEnd(s.stderrFd(), WAIT), StandardCharsets.UTF_8);
    }

    /** Waits for the exit (through the pidfd) and reaps the child. */
    ExitStatus await() {
      if (status == null) {
        assertThat(NativeFds.awaitPoll(s.pidfd(), LibC.POLLIN(), WAIT))
            .as("child %d exits", s.pid())
            .isNotZero();
        try (Arena a = Arena.ofConfined()) {
          MemorySegment info = a.allocate(siginfo_t.layout());
          assertThat(Syscalls.waitid(LibC.P_PIDFD(), s.pidfd(), info, LibC.WEXITED())).isZero();
          status = Reaping.status(info);
        }
      }
      return status;
    }

    @Override
    public void close() {
      if (status == null) {
        Syscalls.kill(-s.pid(), LibC.SIGKILL());
        await();
      }
      closeStdin();
      NativeFds.closeAll(s.pidfd(), s.stdoutFd(), s.stderrFd());
    }
  }

  private static SpawnSpec sh(String script, String... args) {
    List<String> argv = new ArrayList<>(List.of("sh", "-c", script, "sh"));
    argv.addAll(List.of(args));
    return new SpawnSpec("/bin/sh", argv, ENV, "/", false);
  }

  /** {@code /bin/cat} reading a stdin pipe: a child that waits, doing nothing else. */
  private static SpawnSpec cat() {
    return new SpawnSpec("/bin/cat", List.of("cat"), ENV, "/", true);
  }

  private static byte[] proc(long pid, String file) throws IOException {
    return Files.readAllBytes(Path.of("/proc/" + pid + "/" + file));
  }

  /** The fields of /proc/pid/stat after the command name: state, ppid, pgrp, session, tty_nr... */
  private static String[] stat(long pid) throws IOException {
    String s = new String(proc(pid, "stat"), StandardCharsets.ISO_8859_1);
    return s.substring(s.lastIndexOf(')') + 2).split(" ");
  }

  /** A signal mask line of a /proc status file ({@code SigBlk}, {@code SigIgn}). */
  private static long mask(Path status, String name) throws IOException {
    return Files.readAllLines(status).stream()
        .filter(l -> l.startsWith(name + ":"))
        .map(l -> Long.parseUnsignedLong(l.substring(name.length() + 1).strip(), 16))
        .findFirst()
        .orElseThrow();
  }

  /**
   * Waits until the child is asleep in read(0, ...): done with its start-up (the dynamic loader
   * opens and closes libraries), so what /proc shows of it is what its program runs with.
   */
  private static void awaitReadingStdin(int pid) throws Exception {
    await(
        () -> {
          try {
            // "nr arg0 ...": read (0), splice (275) or copy_file_range (326) from fd 0
            String[] call = new String(proc(pid, "syscall"), StandardCharsets.US_ASCII).split(" ");
            return call.length > 2
                && Set.of("0", "275", "326").contains(call[0])
                && call[1].equals("0x0");
          } catch (IOException e) {
            return false;
          }
        },
        "child " + pid + " blocked reading its stdin");
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + WAIT + " waiting for " + what);
      }
      TimeUnit.MILLISECONDS.sleep(5);
    }
  }

  private static byte[] nulTerminated(List<byte[]> entries) {
    List<byte[]> parts = new ArrayList<>();
    for (byte[] e : entries) {
      parts.add(e);
      parts.add(new byte[] {0});
    }
    return RawBytes.concat(parts.toArray(byte[][]::new));
  }

  // ---- argv and environment

  @Test
  void argvReachesTheKernelAndTheChildByteForByteWithEmptyAndNonUtf8Arguments() throws Exception {
    List<byte[]> args =
        List.of(
            RawBytes.NOT_UTF8,
            new byte[0],
            RawBytes.utf8("two words"),
            RawBytes.utf8("é ü 日本"),
            RawBytes.utf8("$HOME;*`x`"),
            new byte[0]);
    // The child waits for its stdin to end before it prints and exits.
    List<String> argv = new ArrayList<>(List.of("sh", "-c", "read x; printf '%s\\0' \"$@\"", "sh"));
    args.forEach(a -> argv.add(ByteStrings.decode(a)));
    try (Child c = Child.spawn(new SpawnSpec("/bin/sh", argv, ENV, "/", true))) {
      List<byte[]> expected = new ArrayList<>();
      argv.forEach(a -> expected.add(ByteStrings.encode(a)));
      // The kernel's copy, read while the child runs (a zombie's cmdline is empty) and once its
      // exec is through (the spawn returns before the new image's argv is in place)...
      awaitReadingStdin(c.pid());
      byte[] cmdline = proc(c.pid(), "cmdline");
      c.closeStdin();
      // ... and the child's own view: its positional parameters, NUL-terminated.
      byte[] printed = c.stdout();
      assertThat(c.await()).isEqualTo(new ExitStatus(0, 0));
      assertThat(cmdline).isEqualTo(nulTerminated(expected));
      assertThat(printed).isEqualTo(nulTerminated(args));
    }
  }

  @Test
  void theEnvironmentIsExactlyTheGivenEntriesAsBytes() throws Exception {
    String odd = "ODD=" + RawBytes.NOT_UTF8_STRING;
    List<String> env = List.of("A=1", "EMPTY=", odd, "SPACES=a b  c", "UNICODE=日本");
    try (Child c =
        Child.spawn(
            new SpawnSpec(
                "/bin/sh", List.of("sh", "-c", "read x; printf %s \"$ODD\""), env, "/", true))) {
      awaitReadingStdin(c.pid()); // the exec is through, and the child waits for its stdin
      byte[] environ = proc(c.pid(), "environ");
      c.closeStdin();
      assertThat(c.stdout()).isEqualTo(RawBytes.NOT_UTF8);
      assertThat(c.await().code()).isZero();
      List<byte[]> expected = new ArrayList<>();
      env.forEach(e -> expected.add(ByteStrings.encode(e)));
      // Nothing of the JVM's own environment (PATH, HOME, JAVA_HOME...) is added.
      assertThat(environ).isEqualTo(nulTerminated(expected));
    }
  }

  @Test
  void anEmptyEnvironmentStaysEmpty() throws Exception {
    try (Child c = Child.spawn(new SpawnSpec("/bin/cat", List.of("cat"), List.of(), "/", true))) {
      awaitReadingStdin(c.pid()); // before, the new image's environ may not be in place yet
      assertThat(proc(c.pid(), "cmdline")).isEqualTo(new byte[] {'c', 'a', 't', 0});
      assertThat(proc(c.pid(), "environ")).isEmpty();
    }
  }

  @Test
  void theExecutableIsFoundByTheBytesOfItsPath() throws Exception {
    RawBytes.sh(tmp, "cp /bin/echo \"$X\"");
    String exe = tmp + "/" + RawBytes.NOT_UTF8_STRING;
    try (Child c = Child.spawn(new SpawnSpec(exe, List.of("echo", "ran"), ENV, "/", false))) {
      assertThat(c.stdoutText()).isEqualTo("ran\n");
      assertThat(c.await().code()).isZero();
    }
  }

  // ---- the working directory

  @Test
  void theWorkDirIsEnteredByPathAsItsBytes() throws Exception {
    RawBytes.sh(tmp, "mkdir \"$X\"");
    Path real = tmp.toRealPath();
    String dir = real + "/" + RawBytes.NOT_UTF8_STRING;
    try (Child c =
        Child.spawn(new SpawnSpec("/bin/sh", List.of("sh", "-c", "pwd -P"), ENV, dir, false))) {
      assertThat(c.stdout())
          .isEqualTo(
              RawBytes.concat(RawBytes.utf8(real + "/"), RawBytes.NOT_UTF8, new byte[] {'\n'}));
      assertThat(c.await().code()).isZero();
    }
  }

  @Test
  void theWorkDirIsEnteredByItsOpenFdNotByItsPath() throws Exception {
    Path root = tmp.toRealPath();
    Path opened = Files.createDirectory(root.resolve("a"));
    Files.writeString(opened.resolve("marker"), "the opened one\n");
    try (WorkDirectory dir = WorkDirectory.open(root.toString(), "a")) {
      // The path now names another directory: the child must still start in the one opened.
      Files.move(opened, root.resolve("moved"));
      Files.createDirectory(root.resolve("a"));
      SpawnSpec spec = new SpawnSpec("/bin/cat", List.of("cat", "marker"), ENV, dir, false);
      assertThat(spec.workDir()).isEqualTo(root + "/a");
      try (Child c = Child.spawn(spec)) {
        assertThat(c.stdoutText()).isEqualTo("the opened one\n");
        assertThat(c.await().code()).isZero();
      }
      // The spawn held the fd only while it ran; its owner still has it.
      assertThat(NativeFds.isOpen(dir.fd())).isTrue();
    }
  }

  @Test
  void aRelativeExecutableIsResolvedInTheWorkDirectory() throws Exception {
    Path root = tmp.toRealPath();
    Path sub = Files.createDirectory(root.resolve("sub"));
    Path prog = Files.writeString(sub.resolve("prog"), "#!/bin/sh\necho prog in \"$(pwd -P)\"\n");
    Files.setPosixFilePermissions(prog, PosixFilePermissions.fromString("rwxr-xr-x"));
    try (WorkDirectory dir = WorkDirectory.open(root.toString(), "sub");
        Child c = Child.spawn(new SpawnSpec("./prog", List.of("prog"), ENV, dir, false))) {
      assertThat(c.stdoutText()).isEqualTo("prog in " + sub + "\n");
      assertThat(c.await().code()).isZero();
    }
  }

  @Test
  void aWorkDirectoryClosedBeforeTheSpawnFailsWithEbadfAndLeaksNothing() {
    WorkDirectory dir = WorkDirectory.open(tmp.toString(), "");
    dir.close();
    SpawnSpec spec = new SpawnSpec("/bin/true", List.of("true"), ENV, dir, false);
    assertThatThrownBy(() -> Spawner.spawn(spec)).isInstanceOf(ErrnoException.class); // warm up
    long before = OpenFds.count();
    assertThatThrownBy(() -> Spawner.spawn(spec))
        .isInstanceOfSatisfying(
            ErrnoException.class,
            e -> {
              assertThat(e.call()).isEqualTo("posix_spawn_file_actions_addfchdir_np");
              assertThat(e.errno()).isEqualTo(LibC.EBADF());
            });
    assertThat(OpenFds.count()).isEqualTo(before);
  }

  // ---- stdio

  @Test
  void stdinIsAPipeWhenAskedAndItsBytesArriveExactly() throws Exception {
    byte[] input = RawBytes.concat(RawBytes.NOT_UTF8, new byte[] {0, '\n', 0x7f}, new byte[70_000]);
    try (Child c = Child.spawn(cat())) {
      assertThat(c.s.stdinFd()).isNotNegative();
      // More than a pipe holds: the child must drain it while the parent writes.
      Thread writer =
          Thread.ofPlatform()
              .start(
                  () -> {
                    c.write(input);
                    c.closeStdin();
                  });
      byte[] out = c.stdout();
      writer.join();
      assertThat(out).isEqualTo(input);
      assertThat(c.await().code()).isZero();
    }
  }

  @Test
  void withoutAStdinPipeTheChildReadsDevNull() throws Exception {
    try (Child c = Child.spawn(sh("cat; readlink /proc/self/fd/0"))) {
      assertThat(c.s.stdinFd()).isEqualTo(-1);
      assertThat(c.stdoutText()).isEqualTo("/dev/null\n");
      assertThat(c.await().code()).isZero();
    }
  }

  @Test
  void stdoutAndStderrAreTwoPipesAndTheExitCodeComesThroughThePidfd() throws Exception {
    try (Child c = Child.spawn(sh("echo out; echo err >&2; exit 7"))) {
      assertThat(c.stdoutText()).isEqualTo("out\n");
      assertThat(c.stderrText()).isEqualTo("err\n");
      assertThat(c.await()).isEqualTo(new ExitStatus(7, 0));
    }
  }

  @Test
  void theChildsStdioIsThePipesWhoseOtherEndsTheParentHolds() throws Exception {
    try (Child c = Child.spawn(cat())) {
      awaitReadingStdin(c.pid());
      assertThat(NativeFds.target(c.pid(), 0))
          .startsWith("pipe:")
          .isEqualTo(NativeFds.target(c.s.stdinFd()));
      assertThat(NativeFds.target(c.pid(), 1))
          .startsWith("pipe:")
          .isEqualTo(NativeFds.target(c.s.stdoutFd()));
      assertThat(NativeFds.target(c.pid(), 2))
          .startsWith("pipe:")
          .isEqualTo(NativeFds.target(c.s.stderrFd()));
      assertThat(new int[] {c.s.stdinFd(), c.s.stdoutFd(), c.s.stderrFd()}).doesNotHaveDuplicates();
      // The parent holds only its own ends: the child's were closed after the spawn.
      for (int fd : new int[] {0, 1, 2}) {
        assertThat(NativeFds.openAs(NativeFds.target(c.pid(), fd))).hasSize(1);
      }
    }
  }

  @Test
  void theParentsFdsAreCloseOnExec() {
    try (Child c = Child.spawn(cat())) {
      for (int fd : new int[] {c.s.pidfd(), c.s.stdinFd(), c.s.stdoutFd(), c.s.stderrFd()}) {
        assertThat(NativeFds.isCloexec(fd)).as("fd %d", fd).isTrue();
      }
    }
  }

  @Test
  void aTerminalSpecMakesThePtyTheChildsStdioAndControllingTerminal() throws Exception {
    Pty.Opened pty = Pty.open(24, 80);
    try {
      SpawnSpec spec =
          sh("stty -echo; tty; readlink /proc/self/fd/1 /proc/self/fd/2;"
                  + " echo ctty > /dev/tty && echo ok; read x")
              .withStdio(true, pty.slavePath());
      try (Child c = Child.spawn(spec)) {
        assertThat(c.s.stdinFd()).isEqualTo(-1);
        assertThat(c.s.stdoutFd()).isEqualTo(-1);
        assertThat(c.s.stderrFd()).isEqualTo(-1);
        // Read while the child still holds the terminal, then let it end.
        StringBuilder out = new StringBuilder();
        while (!out.toString().endsWith("ok\r\n")) {
          assertThat(NativeFds.awaitPoll(pty.master(), LibC.POLLIN(), WAIT))
              .as("output so far: %s", out)
              .isNotZero();
          byte[] b = NativeFds.readOnce(pty.master(), 4096);
          assertThat(b).as("output so far: %s", out).isNotNull();
          out.append(new String(b, StandardCharsets.UTF_8));
        }
        NativeFds.writeFully(pty.master(), new byte[] {'\n'});
        assertThat(out.toString().replace("\r\n", "\n"))
            .isEqualTo(
                String.join("\n", pty.slavePath(), pty.slavePath(), pty.slavePath(), "ctty", "ok")
                    + "\n");
        assertThat(c.await().code()).isZero();
      }
    } finally {
      Syscalls.close(pty.master());
    }
  }

  // ---- session, signals and fds

  @Test
  void theChildLeadsItsOwnSessionAndProcessGroupWithoutATerminal() throws Exception {
    String[] jvm = stat(ProcessHandle.current().pid());
    try (Child c = Child.spawn(cat())) {
      String[] f = stat(c.pid());
      String pid = String.valueOf(c.pid());
      assertThat(f[1]).as("ppid").isEqualTo(String.valueOf(ProcessHandle.current().pid()));
      assertThat(f[2]).as("pgrp").isEqualTo(pid);
      assertThat(f[3]).as("session").isEqualTo(pid).isNotEqualTo(jvm[3]);
      assertThat(f[4]).as("tty_nr").isEqualTo("0");
    }
  }

  private static final MethodHandle PTHREAD_SIGMASK =
      Linker.nativeLinker()
          .downcallHandle(
              Linker.nativeLinker().defaultLookup().find("pthread_sigmask").orElseThrow(),
              FunctionDescriptor.of(
                  ValueLayout.JAVA_INT,
                  ValueLayout.JAVA_INT,
                  ValueLayout.ADDRESS,
                  ValueLayout.ADDRESS));
  private static final MethodHandle SIGNAL =
      Linker.nativeLinker()
          .downcallHandle(
              Linker.nativeLinker().defaultLookup().find("signal").orElseThrow(),
              FunctionDescriptor.of(
                  ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
  private static final int SIG_BLOCK = 0;
  private static final int SIG_SETMASK = 2;

  @Test
  void theChildStartsWithNoSignalBlockedOrIgnoredWhateverTheSpawningThreadHas() throws Throwable {
    // The spawning thread blocks SIGWINCH and the JVM ignores it (SIG_IGN survives an exec, a
    // blocked mask too): the child must have neither. SIGWINCH's default action is to ignore it,
    // so the JVM behaves the same meanwhile.
    int sig = LibC.SIGWINCH();
    long bit = 1L << (sig - 1);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment set = a.allocate(sigset_t.sizeof());
      MemorySegment old = a.allocate(sigset_t.sizeof());
      LibC.sigemptyset(set);
      LibC.sigaddset(set, sig);
      assertThat((int) PTHREAD_SIGMASK.invokeExact(SIG_BLOCK, set, old)).isZero();
      MemorySegment oldHandler =
          (MemorySegment) SIGNAL.invokeExact(sig, MemorySegment.ofAddress(1)); // SIG_IGN
      try {
        long tid = Syscalls.gettid();
        Path self = Path.of("/proc/self/task/" + tid + "/status");
        assertThat(mask(self, "SigBlk") & bit).as("blocked here").isEqualTo(bit);
        assertThat(mask(self, "SigIgn") & bit).as("ignored here").isEqualTo(bit);
        try (Child c = Child.spawn(cat())) {
          awaitReadingStdin(c.pid());
          Path child = Path.of("/proc/" + c.pid() + "/status");
          assertThat(mask(child, "SigBlk")).as("blocked in the child").isZero();
          assertThat(mask(child, "SigIgn")).as("ignored in the child").isZero();
        }
      } finally {
        MemorySegment ours = (MemorySegment) SIGNAL.invokeExact(sig, oldHandler);
        assertThat(ours.address()).isEqualTo(1L);
        assertThat((int) PTHREAD_SIGMASK.invokeExact(SIG_SETMASK, old, MemorySegment.NULL))
            .isZero();
      }
    }
  }

  @Test
  void noFdOfTheJvmReachesTheChildNotEvenOnesWithoutCloexec() throws Exception {
    // Fds a careless library opened without O_CLOEXEC, one of them at a high number, and the
    // open work directory of the spawn itself.
    int[] leaky = Syscalls.pipe2(0);
    int high = Syscalls.fcntl(leaky[0], F_DUPFD, 500);
    assertThat(high).isGreaterThanOrEqualTo(500);
    assertThat(NativeFds.isCloexec(leaky[1])).isFalse();
    assertThat(NativeFds.isCloexec(high)).isFalse();
    try (WorkDirectory dir = WorkDirectory.open(tmp.toString(), "");
        Child byPath = Child.spawn(cat());
        Child byFd = Child.spawn(new SpawnSpec("/bin/cat", List.of("cat"), ENV, dir, true))) {
      for (Child c : List.of(byPath, byFd)) {
        awaitReadingStdin(c.pid());
        assertThat(NativeFds.openIn(c.pid()))
            .as("fds of child %d", c.pid())
            .containsExactly(0, 1, 2);
      }
    } finally {
      NativeFds.closeAll(leaky[0], leaky[1], high);
    }
  }

  @Test
  void childrenSpawnedConcurrentlyGetOnlyTheirOwnPipes() throws Exception {
    // Another thread's fresh pipes exist while each spawn runs: none may reach a child (a stdin
    // write end in another child would keep that stdin from ever reaching end of file).
    int threads = 4;
    int each = 10;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Void>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int id = t;
        Callable<Void> task =
            () -> {
              for (int i = 0; i < each; i++) {
                try (Child c = Child.spawn(cat())) {
                  awaitReadingStdin(c.pid());
                  assertThat(NativeFds.openIn(c.pid())).containsExactly(0, 1, 2);
                  assertThat(NativeFds.target(c.pid(), 0))
                      .isEqualTo(NativeFds.target(c.s.stdinFd()));
                  byte[] line =
                      ("thread " + id + " child " + i + "\n").getBytes(StandardCharsets.UTF_8);
                  c.write(line);
                  c.closeStdin();
                  assertThat(c.stdout()).isEqualTo(line);
                  assertThat(c.await().code()).isZero();
                }
              }
              return null;
            };
        done.add(pool.submit(task));
      }
      for (Future<Void> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }
  }

  // ---- the pidfd

  @Test
  void thePidfdNamesTheChildAndSignalsAndReapsIt() throws Exception {
    try (Child c = Child.spawn(cat())) {
      List<String> fdinfo = Files.readAllLines(Path.of("/proc/self/fdinfo/" + c.s.pidfd()));
      assertThat(fdinfo).contains("Pid:\t" + c.pid());
      awaitReadingStdin(c.pid());
      assertThat(NativeFds.pollNow(c.s.pidfd(), LibC.POLLIN()))
          .as("readable while it runs")
          .isZero();
      assertThat(Syscalls.pidfdSendSignal(c.s.pidfd(), LibC.SIGTERM())).isZero();
      assertThat(c.await()).isEqualTo(new ExitStatus(-1, LibC.SIGTERM()));
      assertThat(c.await().signaled()).isTrue();
      assertThat(JvmChildren.pids()).doesNotContain(c.pid());
    }
  }

  @Test
  void abandonKillsTheWholeProcessGroupReapsAndClosesEverything() throws Exception {
    Spawner.Spawned s = Spawner.spawn(sh("sleep 600 & echo $!; wait"));
    int grandchild;
    int grandchildFd;
    try {
      byte[] line = NativeFds.readOnce(s.stdoutFd(), 64);
      assertThat(line).isNotNull();
      grandchild = Integer.parseInt(new String(line, StandardCharsets.US_ASCII).strip());
      grandchildFd = Syscalls.pidfdOpen(grandchild);
      assertThat(grandchildFd).isNotNegative();
    } catch (Throwable t) {
      Spawner.abandon(s, true);
      throw t;
    }
    try {
      int[] fds = {s.pidfd(), s.stdoutFd(), s.stderrFd()};
      String[] was = new String[fds.length];
      for (int i = 0; i < fds.length; i++) {
        was[i] = NativeFds.target(fds[i]);
      }
      Spawner.abandon(s, true);
      assertThat(JvmChildren.pids()).doesNotContain(s.pid());
      for (int i = 0; i < fds.length; i++) {
        // closed, or (the number reused since) no longer what it was
        assertThat(NativeFds.target(fds[i])).as("fd %d", fds[i]).isNotEqualTo(was[i]);
      }
      // The sleep, in the child's group but not its child any more, dies too.
      assertThat(NativeFds.awaitPoll(grandchildFd, LibC.POLLIN(), WAIT)).isNotZero();
    } finally {
      Syscalls.close(grandchildFd);
    }
  }

  // ---- failures

  private static void assertSpawnFails(SpawnSpec spec, int errno) throws IOException {
    assertThatThrownBy(() -> Spawner.spawn(spec)).isInstanceOf(ErrnoException.class); // warm up
    long fds = OpenFds.count();
    Set<Integer> children = JvmChildren.pids();
    for (int i = 0; i < 20; i++) {
      assertThatThrownBy(() -> Spawner.spawn(spec))
          .isInstanceOfSatisfying(
              ErrnoException.class,
              e -> {
                assertThat(e.call()).isEqualTo("posix_spawn");
                assertThat(e.errno()).as(e.getMessage()).isEqualTo(errno);
              });
    }
    assertThat(OpenFds.count()).as("fds after 20 failed spawns").isEqualTo(fds);
    // glibc reaps the child whose exec failed: no zombie is left behind.
    assertThat(JvmChildren.pids()).isSubsetOf(children);
  }

  @Test
  void aMissingExecutableFailsWithEnoent() throws IOException {
    assertSpawnFails(
        new SpawnSpec(tmp + "/missing", List.of("missing"), ENV, "/", true), LibC.ENOENT());
  }

  @Test
  void aFileWithoutExecutePermissionFailsWithEaccesEvenForRoot() throws IOException {
    Path file = Files.writeString(tmp.resolve("not-executable"), "#!/bin/sh\necho ran\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    assertSpawnFails(new SpawnSpec(file.toString(), List.of("x"), ENV, "/", true), LibC.EACCES());
    assertSpawnFails(new SpawnSpec(tmp.toString(), List.of("x"), ENV, "/", false), LibC.EACCES());
  }

  @Test
  void anExecutableTextFileWithoutInterpreterFailsWithEnoexecInsteadOfRunningInAShell()
      throws IOException {
    Path script = Files.writeString(tmp.resolve("no-shebang"), "touch " + tmp + "/ran\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    assertSpawnFails(
        new SpawnSpec(script.toString(), List.of("x"), ENV, "/", false), LibC.ENOEXEC());
    assertThat(tmp.resolve("ran")).doesNotExist();
  }

  @Test
  void aMissingOrNonDirectoryWorkDirFailsWithEnoentOrEnotdir() throws IOException {
    Path file = Files.createFile(tmp.resolve("file"));
    assertSpawnFails(
        new SpawnSpec("/bin/true", List.of("true"), ENV, tmp + "/missing", true), LibC.ENOENT());
    assertSpawnFails(
        new SpawnSpec("/bin/true", List.of("true"), ENV, file.toString(), false), LibC.ENOTDIR());
  }

  @Test
  void withTheCallersPipesAFailedSpawnClosesTheChildEndsAndLeavesTheParentEnds()
      throws IOException {
    SpawnSpec spec = new SpawnSpec(tmp + "/missing", List.of("missing"), ENV, "/", true);
    Spawner.Pipes pipes = Spawner.Pipes.open(true);
    String in = NativeFds.target(pipes.stdinWrite());
    String out = NativeFds.target(pipes.stdoutRead());
    String err = NativeFds.target(pipes.stderrRead());
    try {
      assertThatThrownBy(() -> Spawner.spawn(spec, pipes, -1))
          .isInstanceOfSatisfying(
              ErrnoException.class, e -> assertThat(e.errno()).isEqualTo(LibC.ENOENT()));
      // Each pipe is now open once in this JVM: at the parent's end.
      assertThat(NativeFds.openAs(in)).containsExactly(pipes.stdinWrite());
      assertThat(NativeFds.openAs(out)).containsExactly(pipes.stdoutRead());
      assertThat(NativeFds.openAs(err)).containsExactly(pipes.stderrRead());
    } finally {
      pipes.closeParentEnds();
    }
  }

  @Test
  void aTerminalSpecIsRefusedWithCallersPipes() {
    SpawnSpec spec = cat().withStdio(false, "/dev/pts/0");
    Spawner.Pipes pipes = Spawner.Pipes.open(false);
    try {
      assertThatThrownBy(() -> Spawner.spawn(spec, pipes, -1))
          .isInstanceOf(IllegalArgumentException.class);
    } finally {
      pipes.closeChildEnds();
      pipes.closeParentEnds();
    }
  }

  @Test
  void pipesWithoutStdinHaveNoStdinEnds() {
    Spawner.Pipes pipes = Spawner.Pipes.open(false);
    try {
      assertThat(pipes.stdinRead()).isEqualTo(-1);
      assertThat(pipes.stdinWrite()).isEqualTo(-1);
      for (int fd :
          new int[] {
            pipes.stdoutRead(), pipes.stdoutWrite(), pipes.stderrRead(), pipes.stderrWrite()
          }) {
        assertThat(NativeFds.isCloexec(fd)).isTrue();
      }
    } finally {
      pipes.closeChildEnds();
      pipes.closeParentEnds();
    }
  }

  // ---- the spec

  @Test
  void aSpecCopiesItsListsAndNeedsArgvZero() {
    List<String> argv = new ArrayList<>(List.of("cat"));
    List<String> env = new ArrayList<>(List.of("A=1"));
    SpawnSpec spec = new SpawnSpec("/bin/cat", argv, env, "/", true);
    argv.add("more");
    env.clear();
    assertThat(spec.argv()).containsExactly("cat");
    assertThat(spec.environment()).containsExactly("A=1");
    assertThat(spec.withStdio(false, "/dev/pts/9"))
        .isEqualTo(
            new SpawnSpec("/bin/cat", List.of("cat"), List.of("A=1"), "/", false, "/dev/pts/9"));
    assertThatThrownBy(() -> new SpawnSpec("/bin/cat", List.of(), env, "/", true))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
