package dev.confine.linux.spawn;

import dev.confine.ByteStrings;
import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.posix_spawn_file_actions_t;
import dev.confine.linux.libc.posix_spawnattr_t;
import dev.confine.linux.libc.sigset_t;
import dev.confine.linux.sys.Availability;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Optional;

/**
 * Starts a child with posix_spawn: its own session and process group (SETSID alone: adding
 * SETPGROUP makes glibc's setpgid fail with EPERM on the new session leader), an empty signal mask
 * (the JVM's main thread blocks SIGQUIT), every signal reset to its default (an all-ones set:
 * sigfillset leaves out glibc's internal signals, which would stay ignored across exec), stdio on
 * fresh O_CLOEXEC pipes, every other fd closed, and the working directory set by a file action:
 * fchdir into the spec's open directory, or chdir by path without one. Every string is passed as
 * the bytes it stands for ({@link ByteStrings}).
 */
@SuppressWarnings("restricted")
public final class Spawner {
  private static final int SIGSET_BYTES = (int) sigset_t.sizeof();

  // glibc 2.39's <spawn.h>; absent from the 2.36 headers the bindings were generated from.
  private static final int POSIX_SPAWN_SETCGROUP = 0x100;
  private static final Optional<MethodHandle> SETCGROUP =
      Linker.nativeLinker()
          .defaultLookup()
          .find("posix_spawnattr_setcgroup_np")
          .map(
              addr ->
                  Linker.nativeLinker()
                      .downcallHandle(
                          addr,
                          FunctionDescriptor.of(
                              ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT)));

  // glibc 2.29; newer than the bindings' declarations. Returns an error number, as posix_spawn.
  private static final MethodHandle ADDFCHDIR =
      Linker.nativeLinker()
          .downcallHandle(
              Linker.nativeLinker()
                  .defaultLookup()
                  .find("posix_spawn_file_actions_addfchdir_np")
                  .orElseThrow(),
              FunctionDescriptor.of(
                  ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));

  private static int addFchdir(MemorySegment actions, int fd) {
    try {
      return (int) ADDFCHDIR.invokeExact(actions, fd);
    } catch (Throwable t) {
      throw new IllegalStateException("posix_spawn_file_actions_addfchdir_np failed", t);
    }
  }

  /**
   * Whether this glibc can spawn straight into a cgroup v2 (glibc 2.39 or newer), and if not why.
   */
  public static Availability spawnIntoCgroupAvailability() {
    return SETCGROUP.isPresent() ? Availability.AVAILABLE : NO_SETCGROUP;
  }

  private static final Availability NO_SETCGROUP =
      Availability.unavailable("posix_spawnattr_setcgroup_np needs glibc 2.39 or newer");

  private static int setCgroup(MemorySegment attr, int cgroupFd) {
    try {
      return (int) SETCGROUP.orElseThrow().invokeExact(attr, cgroupFd);
    } catch (Throwable t) {
      throw new IllegalStateException("posix_spawnattr_setcgroup_np failed", t);
    }
  }

  private Spawner() {}

  /** A spawned child and the parent's ends of its pipes (-1 where there is none). */
  public record Spawned(int pid, int pidfd, int stdinFd, int stdoutFd, int stderrFd) {}

  /**
   * Spawns {@code spec}.
   *
   * @throws ErrnoException when a pipe, posix_spawn or pidfd_open fails; the call name says which
   */
  public static Spawned spawn(SpawnSpec spec) {
    return spawn(spec, -1);
  }

  /**
   * Spawns {@code spec} directly into the cgroup v2 directory open at {@code cgroupFd} (clone3 with
   * CLONE_INTO_CGROUP, through glibc 2.39's posix_spawnattr_setcgroup_np), or as {@link
   * #spawn(SpawnSpec)} when it is -1.
   *
   * @throws IllegalStateException when a cgroup fd is given and this glibc cannot spawn into it
   */
  static Spawned spawn(SpawnSpec spec, int cgroupFd) {
    if (cgroupFd >= 0 && SETCGROUP.isEmpty()) {
      throw new IllegalStateException(NO_SETCGROUP.unavailabilityCause().orElseThrow());
    }
    if (spec.terminal() != null) {
      int pid = posixSpawn(spec, -1, -1, -1, cgroupFd);
      int pidfd = Syscalls.pidfdOpen(pid);
      if (pidfd < 0) {
        Syscalls.kill(-pid, LibC.SIGKILL());
        throw new ErrnoException("pidfd_open", -pidfd);
      }
      return new Spawned(pid, pidfd, -1, -1, -1);
    }
    Pipes pipes = Pipes.open(spec.pipeStdin());
    try {
      return spawn(spec, pipes, cgroupFd);
    } catch (RuntimeException e) {
      pipes.closeParentEnds();
      throw e;
    }
  }

  /**
   * Spawns {@code spec} (not a terminal one) with {@code pipes} as its stdio. The child's ends are
   * closed here whatever happens; the parent's ends stay the caller's, also when this throws.
   */
  static Spawned spawn(SpawnSpec spec, Pipes pipes, int cgroupFd) {
    if (spec.terminal() != null) {
      throw new IllegalArgumentException("a terminal spec has no pipes");
    }
    int pid;
    try {
      pid = posixSpawn(spec, pipes.stdinRead(), pipes.stdoutWrite(), pipes.stderrWrite(), cgroupFd);
    } finally {
      pipes.closeChildEnds();
    }
    int pidfd = Syscalls.pidfdOpen(pid);
    if (pidfd < 0) {
      // Without a pidfd nothing can watch or reap this child safely: stop it now.
      Syscalls.kill(-pid, LibC.SIGKILL());
      throw new ErrnoException("pidfd_open", -pidfd);
    }
    return new Spawned(pid, pidfd, pipes.stdinWrite(), pipes.stdoutRead(), pipes.stderrRead());
  }

  /**
   * A child's stdio pipes, O_CLOEXEC: the child's ends (read end of stdin, write ends of stdout and
   * stderr) and the parent's; -1 for stdin when the child reads /dev/null.
   */
  public record Pipes(
      int stdinRead,
      int stdinWrite,
      int stdoutRead,
      int stdoutWrite,
      int stderrRead,
      int stderrWrite) {
    /**
     * Opens them; nothing stays open when one fails.
     *
     * @throws ErrnoException when pipe2 fails
     */
    public static Pipes open(boolean stdin) {
      int[] in = stdin ? Syscalls.pipe2(LibC.O_CLOEXEC()) : new int[] {-1, -1};
      int[] out = null;
      try {
        out = Syscalls.pipe2(LibC.O_CLOEXEC());
        int[] err = Syscalls.pipe2(LibC.O_CLOEXEC());
        return new Pipes(in[0], in[1], out[0], out[1], err[0], err[1]);
      } catch (RuntimeException e) {
        closeQuietly(in[0], in[1]);
        if (out != null) {
          closeQuietly(out[0], out[1]);
        }
        throw e;
      }
    }

    public void closeChildEnds() {
      closeQuietly(stdinRead, stdoutWrite, stderrWrite);
    }

    public void closeParentEnds() {
      closeQuietly(stdinWrite, stdoutRead, stderrRead);
    }
  }

  private static int posixSpawn(
      SpawnSpec spec, int stdinRead, int stdoutWrite, int stderrWrite, int cgroupFd) {
    WorkDirectory dir = spec.directory();
    if (dir == null) {
      return posixSpawn(spec, -1, stdinRead, stdoutWrite, stderrWrite, cgroupFd);
    }
    int dirFd = dir.acquire();
    if (dirFd < 0) {
      // Its owner closed it already: the spawn outlived the exec it was for.
      throw new ErrnoException("posix_spawn_file_actions_addfchdir_np", LibC.EBADF());
    }
    try {
      return posixSpawn(spec, dirFd, stdinRead, stdoutWrite, stderrWrite, cgroupFd);
    } finally {
      dir.release();
    }
  }

  private static int posixSpawn(
      SpawnSpec spec, int dirFd, int stdinRead, int stdoutWrite, int stderrWrite, int cgroupFd) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment attr = posix_spawnattr_t.allocate(arena);
      MemorySegment actions = posix_spawn_file_actions_t.allocate(arena);
      check("posix_spawnattr_init", LibC.posix_spawnattr_init(attr));
      check("posix_spawn_file_actions_init", LibC.posix_spawn_file_actions_init(actions));
      try {
        MemorySegment mask = arena.allocate(SIGSET_BYTES);
        check("sigemptyset", LibC.sigemptyset(mask) == 0 ? 0 : LibC.EINVAL());
        MemorySegment defaults = arena.allocate(SIGSET_BYTES).fill((byte) 0xff);
        check("posix_spawnattr_setsigmask", LibC.posix_spawnattr_setsigmask(attr, mask));
        check("posix_spawnattr_setsigdefault", LibC.posix_spawnattr_setsigdefault(attr, defaults));
        int flags =
            LibC.POSIX_SPAWN_SETSID()
                | LibC.POSIX_SPAWN_SETSIGMASK()
                | LibC.POSIX_SPAWN_SETSIGDEF();
        if (cgroupFd >= 0) {
          check("posix_spawnattr_setcgroup_np", setCgroup(attr, cgroupFd));
          flags |= POSIX_SPAWN_SETCGROUP;
        }
        check("posix_spawnattr_setflags", LibC.posix_spawnattr_setflags(attr, (short) flags));

        // First, so that no dup2 below can replace the fd before it is used.
        if (dirFd >= 0) {
          check("addfchdir_np", addFchdir(actions, dirFd));
        } else {
          check(
              "addchdir_np",
              LibC.posix_spawn_file_actions_addchdir_np(actions, cString(arena, spec.workDir())));
        }
        if (spec.terminal() != null) {
          // Opened without O_NOCTTY by the new session's leader: it becomes the controlling tty.
          check(
              "addopen",
              LibC.posix_spawn_file_actions_addopen(
                  actions, 0, cString(arena, spec.terminal()), LibC.O_RDWR(), 0));
          check("adddup2", LibC.posix_spawn_file_actions_adddup2(actions, 0, 1));
          check("adddup2", LibC.posix_spawn_file_actions_adddup2(actions, 0, 2));
        } else {
          if (stdinRead >= 0) {
            check("adddup2", LibC.posix_spawn_file_actions_adddup2(actions, stdinRead, 0));
          } else {
            check(
                "addopen",
                LibC.posix_spawn_file_actions_addopen(
                    actions, 0, arena.allocateFrom("/dev/null"), LibC.O_RDONLY(), 0));
          }
          check("adddup2", LibC.posix_spawn_file_actions_adddup2(actions, stdoutWrite, 1));
          check("adddup2", LibC.posix_spawn_file_actions_adddup2(actions, stderrWrite, 2));
        }
        check("addclosefrom_np", LibC.posix_spawn_file_actions_addclosefrom_np(actions, 3));

        MemorySegment pid = arena.allocate(ValueLayout.JAVA_INT);
        int rc =
            LibC.posix_spawn(
                pid,
                cString(arena, spec.executable()),
                actions,
                attr,
                cStringArray(arena, spec.argv()),
                cStringArray(arena, spec.environment()));
        if (rc != 0) {
          throw new ErrnoException("posix_spawn", rc);
        }
        return pid.get(ValueLayout.JAVA_INT, 0);
      } finally {
        LibC.posix_spawn_file_actions_destroy(actions);
        LibC.posix_spawnattr_destroy(attr);
      }
    }
  }

  private static void check(String call, int rc) {
    if (rc != 0) {
      throw new ErrnoException(call, rc);
    }
  }

  /** {@code s} as the NUL-terminated bytes it stands for ({@link ByteStrings}). */
  static MemorySegment cString(Arena arena, String s) {
    byte[] bytes = ByteStrings.encode(s);
    MemorySegment seg = arena.allocate(bytes.length + 1L);
    MemorySegment.copy(bytes, 0, seg, ValueLayout.JAVA_BYTE, 0, bytes.length);
    return seg;
  }

  private static MemorySegment cStringArray(Arena arena, List<String> strings) {
    MemorySegment array = arena.allocate(ValueLayout.ADDRESS, strings.size() + 1L);
    for (int i = 0; i < strings.size(); i++) {
      array.setAtIndex(ValueLayout.ADDRESS, i, cString(arena, strings.get(i)));
    }
    array.setAtIndex(ValueLayout.ADDRESS, strings.size(), MemorySegment.NULL);
    return array;
  }

  /**
   * Kills a child that must not run after all, and its process group, reaps it and closes its pidfd
   * and, with {@code closeStdio}, the parent's pipe ends (not when they belong to a caller that
   * made them, see {@link #spawn(SpawnSpec, Pipes, int)}).
   */
  public static void abandon(Spawned s, boolean closeStdio) {
    Syscalls.kill(-s.pid(), LibC.SIGKILL());
    try (Arena arena = Arena.ofConfined()) {
      Syscalls.waitid(
          LibC.P_PIDFD(), s.pidfd(), arena.allocate(Reaping.SIGINFO.byteSize()), LibC.WEXITED());
    }
    closeQuietly(s.pidfd());
    if (closeStdio) {
      closeQuietly(s.stdinFd(), s.stdoutFd(), s.stderrFd());
    }
  }

  static void closeQuietly(int... fds) {
    for (int fd : fds) {
      if (fd >= 0) {
        Syscalls.close(fd);
      }
    }
  }
}
