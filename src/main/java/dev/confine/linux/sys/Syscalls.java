package dev.confine.linux.sys;

import dev.confine.linux.libc.LibC;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * The libc calls that report failure through errno, bound by hand because jextract's handles do not
 * capture errno ({@link Linker.Option#captureCallState}). Each returns the call's result, or {@code
 * -errno} when it failed, so hot paths (EAGAIN on a non-blocking read) cost no exception. Calls
 * that return an error number directly (posix_spawn) use the generated bindings.
 */
@SuppressWarnings("restricted")
public final class Syscalls {
  // The handles, bind(), errno() and rethrow() are package-private so that ProcFiles can make the
  // same calls with a capture state of its own (one per sampler) instead of the thread-local one.
  private Syscalls() {}

  private static final Linker LINKER = Linker.nativeLinker();
  public static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO =
      CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
  private static final Linker.Option ERRNO_OPTION = Linker.Option.captureCallState("errno");
  private static final ThreadLocal<MemorySegment> STATE =
      ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE));

  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
  private static final ValueLayout ADDR = ValueLayout.ADDRESS;

  /** The downcall handle of {@code read(2)} (errno captured), for callers that keep it constant. */
  public static MethodHandle readHandle() {
    return Read.HANDLE;
  }

  /** The downcall handle of {@code close(2)} (errno captured). */
  public static MethodHandle closeHandle() {
    return Close.HANDLE;
  }

  /** The downcall handle of {@code open(2)} with a mode (errno captured). */
  public static MethodHandle openHandle() {
    return Open.HANDLE;
  }

  // One holder class per downcall handle: a handle is made on first use (making all of them at
  // class initialisation cost about 0.2 s of every command's start-up), and is still a constant
  // to the JIT.
  private static final class Read {
    static final MethodHandle HANDLE = bind("read", FunctionDescriptor.of(LONG, INT, ADDR, LONG));
  }

  private static final class Write {
    static final MethodHandle HANDLE = bind("write", FunctionDescriptor.of(LONG, INT, ADDR, LONG));
  }

  private static final class Close {
    static final MethodHandle HANDLE = bind("close", FunctionDescriptor.of(INT, INT));
  }

  private static final class Pread {
    static final MethodHandle HANDLE =
        bind("pread", FunctionDescriptor.of(LONG, INT, ADDR, LONG, LONG));
  }

  private static final class Pwrite {
    static final MethodHandle HANDLE =
        bind("pwrite", FunctionDescriptor.of(LONG, INT, ADDR, LONG, LONG));
  }

  private static final class Pipe2 {
    static final MethodHandle HANDLE = bind("pipe2", FunctionDescriptor.of(INT, ADDR, INT));
  }

  private static final class FcntlInt {
    static final MethodHandle HANDLE =
        bindVariadic("fcntl", FunctionDescriptor.of(INT, INT, INT, INT), 2);
  }

  private static final class Kill {
    static final MethodHandle HANDLE = bind("kill", FunctionDescriptor.of(INT, INT, INT));
  }

  private static final class EpollCreate1 {
    static final MethodHandle HANDLE = bind("epoll_create1", FunctionDescriptor.of(INT, INT));
  }

  private static final class EpollCtl {
    static final MethodHandle HANDLE =
        bind("epoll_ctl", FunctionDescriptor.of(INT, INT, INT, INT, ADDR));
  }

  private static final class EpollWait {
    static final MethodHandle HANDLE =
        bind("epoll_wait", FunctionDescriptor.of(INT, INT, ADDR, INT, INT));
  }

  private static final class Eventfd {
    static final MethodHandle HANDLE = bind("eventfd", FunctionDescriptor.of(INT, INT, INT));
  }

  private static final class Waitid {
    static final MethodHandle HANDLE =
        bind("waitid", FunctionDescriptor.of(INT, INT, INT, ADDR, INT));
  }

  private static final class Syscall3 {
    static final MethodHandle HANDLE =
        bindVariadic("syscall", FunctionDescriptor.of(LONG, LONG, INT, INT, INT), 1);
  }

  private static final class Syscall4 {
    static final MethodHandle HANDLE =
        bindVariadic("syscall", FunctionDescriptor.of(LONG, LONG, INT, INT, ADDR, INT), 1);
  }

  private static final class SyscallPtrLongInt {
    static final MethodHandle HANDLE =
        bindVariadic("syscall", FunctionDescriptor.of(LONG, LONG, ADDR, LONG, INT), 1);
  }

  private static final class SyscallIntPtrLong {
    static final MethodHandle HANDLE =
        bindVariadic("syscall", FunctionDescriptor.of(LONG, LONG, INT, ADDR, LONG), 1);
  }

  private static final class SyscallIntIntPtr {
    static final MethodHandle HANDLE =
        bindVariadic("syscall", FunctionDescriptor.of(LONG, LONG, INT, INT, ADDR), 1);
  }

  private static final class Prctl {
    static final MethodHandle HANDLE =
        bindVariadic("prctl", FunctionDescriptor.of(INT, INT, LONG, LONG, LONG, LONG), 1);
  }

  private static final class Open {
    static final MethodHandle HANDLE =
        bindVariadic("open", FunctionDescriptor.of(INT, ADDR, INT, INT), 2);
  }

  private static final class Mkdir {
    static final MethodHandle HANDLE = bind("mkdir", FunctionDescriptor.of(INT, ADDR, INT));
  }

  private static final class Rmdir {
    static final MethodHandle HANDLE = bind("rmdir", FunctionDescriptor.of(INT, ADDR));
  }

  private static final class Access {
    static final MethodHandle HANDLE = bind("access", FunctionDescriptor.of(INT, ADDR, INT));
  }

  private static final class Grantpt {
    static final MethodHandle HANDLE = bind("grantpt", FunctionDescriptor.of(INT, INT));
  }

  private static final class Unlockpt {
    static final MethodHandle HANDLE = bind("unlockpt", FunctionDescriptor.of(INT, INT));
  }

  private static final class Poll {
    static final MethodHandle HANDLE = bind("poll", FunctionDescriptor.of(INT, ADDR, LONG, INT));
  }

  private static final class Unshare {
    static final MethodHandle HANDLE = bind("unshare", FunctionDescriptor.of(INT, INT));
  }

  private static final class Setns {
    static final MethodHandle HANDLE = bind("setns", FunctionDescriptor.of(INT, INT, INT));
  }

  private static final class Bind {
    static final MethodHandle HANDLE = bind("bind", FunctionDescriptor.of(INT, INT, ADDR, INT));
  }

  private static final class Listen {
    static final MethodHandle HANDLE = bind("listen", FunctionDescriptor.of(INT, INT, INT));
  }

  private static final class Mount {
    static final MethodHandle HANDLE =
        bind("mount", FunctionDescriptor.of(INT, ADDR, ADDR, ADDR, LONG, ADDR));
  }

  private static final class Socket {
    static final MethodHandle HANDLE = bind("socket", FunctionDescriptor.of(INT, INT, INT, INT));
  }

  private static final class IoctlPtr {
    static final MethodHandle HANDLE =
        bindVariadic("ioctl", FunctionDescriptor.of(INT, INT, LONG, ADDR), 2);
  }

  private static final class SyscallIntPtrIntPtrLong {
    static final MethodHandle HANDLE =
        bindVariadic("syscall", FunctionDescriptor.of(LONG, LONG, INT, ADDR, INT, ADDR, LONG), 1);
  }

  private static final class SyscallPtrPtr {
    static final MethodHandle HANDLE =
        bindVariadic("syscall", FunctionDescriptor.of(LONG, LONG, ADDR, ADDR), 1);
  }

  private static final class SyscallIntPtr {
    static final MethodHandle HANDLE =
        bindVariadic("syscall", FunctionDescriptor.of(LONG, LONG, INT, ADDR), 1);
  }

  private static final class SyscallLong6 {
    static final MethodHandle HANDLE =
        bindVariadic(
            "syscall", FunctionDescriptor.of(LONG, LONG, LONG, LONG, LONG, LONG, LONG, LONG), 1);
  }

  private static final class Connect {
    static final MethodHandle HANDLE = bind("connect", FunctionDescriptor.of(INT, INT, ADDR, INT));
  }

  private static final class Getsockopt {
    static final MethodHandle HANDLE =
        bind("getsockopt", FunctionDescriptor.of(INT, INT, INT, INT, ADDR, ADDR));
  }

  private static final class Getsockname {
    static final MethodHandle HANDLE =
        bind("getsockname", FunctionDescriptor.of(INT, INT, ADDR, ADDR));
  }

  private static final class Getpeername {
    static final MethodHandle HANDLE =
        bind("getpeername", FunctionDescriptor.of(INT, INT, ADDR, ADDR));
  }

  private static final class Lchown {
    static final MethodHandle HANDLE = bind("lchown", FunctionDescriptor.of(INT, ADDR, INT, INT));
  }

  private static final class SyscallIntPtrPtrLong {
    static final MethodHandle HANDLE =
        bindVariadic("syscall", FunctionDescriptor.of(LONG, LONG, INT, ADDR, ADDR, LONG), 1);
  }

  private static final class Openat {
    static final MethodHandle HANDLE =
        bindVariadic("openat", FunctionDescriptor.of(INT, INT, ADDR, INT, INT), 3);
  }

  private static final class Fstatat {
    static final MethodHandle HANDLE =
        bind("fstatat", FunctionDescriptor.of(INT, INT, ADDR, ADDR, INT));
  }

  private static final class Faccessat {
    static final MethodHandle HANDLE =
        bind("faccessat", FunctionDescriptor.of(INT, INT, ADDR, INT, INT));
  }

  private static final class Gettid {
    static final MethodHandle HANDLE =
        LINKER.downcallHandle(
            LINKER.defaultLookup().find("gettid").orElseThrow(), FunctionDescriptor.of(INT));
  }

  private static final class Strerror {
    static final MethodHandle HANDLE =
        LINKER.downcallHandle(
            LINKER.defaultLookup().find("strerror").orElseThrow(),
            FunctionDescriptor.of(ADDR, INT));
  }

  public static MethodHandle bind(String name, FunctionDescriptor fd) {
    return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), fd, ERRNO_OPTION);
  }

  private static MethodHandle bindVariadic(String name, FunctionDescriptor fd, int firstVariadic) {
    return LINKER.downcallHandle(
        LINKER.defaultLookup().find(name).orElseThrow(),
        fd,
        ERRNO_OPTION,
        Linker.Option.firstVariadicArg(firstVariadic));
  }

  public static int errno(MemorySegment state) {
    return (int) ERRNO.get(state, 0L);
  }

  public static RuntimeException rethrow(Throwable t) {
    if (t instanceof RuntimeException re) {
      throw re;
    }
    if (t instanceof Error e) {
      throw e;
    }
    throw new IllegalStateException(t);
  }

  /** read(2): bytes read, 0 at end of file, or -errno. */
  public static long read(int fd, MemorySegment buf, long len) {
    MemorySegment st = STATE.get();
    try {
      long r = (long) Read.HANDLE.invokeExact(st, fd, buf, len);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** write(2): bytes written or -errno. */
  public static long write(int fd, MemorySegment buf, long len) {
    MemorySegment st = STATE.get();
    try {
      long r = (long) Write.HANDLE.invokeExact(st, fd, buf, len);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** pread(2) at {@code offset}: bytes read, 0 at end of file, or -errno. */
  public static long pread(int fd, MemorySegment buf, long len, long offset) {
    MemorySegment st = STATE.get();
    try {
      long r = (long) Pread.HANDLE.invokeExact(st, fd, buf, len, offset);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** pwrite(2) at {@code offset}: bytes written or -errno. */
  public static long pwrite(int fd, MemorySegment buf, long len, long offset) {
    MemorySegment st = STATE.get();
    try {
      long r = (long) Pwrite.HANDLE.invokeExact(st, fd, buf, len, offset);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** close(2): 0 or -errno. */
  public static int close(int fd) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Close.HANDLE.invokeExact(st, fd);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * pipe2(2) with {@code flags}.
   *
   * @return {read end, write end}
   * @throws ErrnoException on failure
   */
  public static int[] pipe2(int flags) {
    MemorySegment st = STATE.get();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment fds = a.allocate(INT, 2);
      int r = (int) Pipe2.HANDLE.invokeExact(st, fds, flags);
      if (r < 0) {
        throw new ErrnoException("pipe2", errno(st));
      }
      return new int[] {fds.getAtIndex(INT, 0), fds.getAtIndex(INT, 1)};
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** fcntl(2) with an int argument: the result or -errno. */
  public static int fcntl(int fd, int cmd, int arg) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) FcntlInt.HANDLE.invokeExact(st, fd, cmd, arg);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * Makes the parent's end of a fresh pipe non-blocking. A pipe end's only status flag is its
   * access mode, which F_SETFL ignores, so no F_GETFL round trip is needed.
   */
  public static void setNonBlocking(int fd) {
    int r = fcntl(fd, LibC.F_SETFL(), LibC.O_NONBLOCK());
    if (r < 0) {
      throw new ErrnoException("fcntl(F_SETFL)", -r);
    }
  }

  /** kill(2): 0 or -errno. */
  public static int kill(int pid, int signal) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Kill.HANDLE.invokeExact(st, pid, signal);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** epoll_create1(2): the fd or -errno. */
  public static int epollCreate1(int flags) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) EpollCreate1.HANDLE.invokeExact(st, flags);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** epoll_ctl(2): 0 or -errno. */
  public static int epollCtl(int epfd, int op, int fd, MemorySegment event) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) EpollCtl.HANDLE.invokeExact(st, epfd, op, fd, event);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** epoll_wait(2): the number of events or -errno. */
  public static int epollWait(int epfd, MemorySegment events, int max, int timeoutMillis) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) EpollWait.HANDLE.invokeExact(st, epfd, events, max, timeoutMillis);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** eventfd(2): the fd or -errno. */
  public static int eventfd(int initval, int flags) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Eventfd.HANDLE.invokeExact(st, initval, flags);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** waitid(2): 0 or -errno. */
  public static int waitid(int idtype, int id, MemorySegment siginfo, int options) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Waitid.HANDLE.invokeExact(st, idtype, id, siginfo, options);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** pidfd_open(2): the pidfd or -errno. */
  public static int pidfdOpen(int pid) {
    MemorySegment st = STATE.get();
    try {
      long r = (long) Syscall3.HANDLE.invokeExact(st, (long) LibC.SYS_pidfd_open(), pid, 0, 0);
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** pidfd_send_signal(2) without siginfo: 0 or -errno. */
  public static int pidfdSendSignal(int pidfd, int signal) {
    MemorySegment st = STATE.get();
    try {
      long r =
          (long)
              Syscall4.HANDLE.invokeExact(
                  st, (long) LibC.SYS_pidfd_send_signal(), pidfd, signal, MemorySegment.NULL, 0);
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * landlock_create_ruleset(2): a ruleset fd, the ABI version (with the VERSION flag), or -errno.
   */
  public static int landlockCreateRuleset(MemorySegment attr, long size, int flags) {
    MemorySegment st = STATE.get();
    try {
      long r =
          (long)
              SyscallPtrLongInt.HANDLE.invokeExact(
                  st, (long) LibC.SYS_landlock_create_ruleset(), attr, size, flags);
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** landlock_add_rule(2): 0 or -errno. */
  public static int landlockAddRule(int rulesetFd, int ruleType, MemorySegment attr) {
    MemorySegment st = STATE.get();
    try {
      long r =
          (long)
              Syscall4.HANDLE.invokeExact(
                  st, (long) LibC.SYS_landlock_add_rule(), rulesetFd, ruleType, attr, 0);
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** landlock_restrict_self(2) of the calling thread: 0 or -errno. */
  public static int landlockRestrictSelf(int rulesetFd) {
    MemorySegment st = STATE.get();
    try {
      long r =
          (long)
              Syscall3.HANDLE.invokeExact(
                  st, (long) LibC.SYS_landlock_restrict_self(), rulesetFd, 0, 0);
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** seccomp(2): the result or -errno. */
  public static int seccomp(int operation, int flags, MemorySegment args) {
    MemorySegment st = STATE.get();
    try {
      long r =
          (long)
              SyscallIntIntPtr.HANDLE.invokeExact(
                  st, (long) LibC.SYS_seccomp(), operation, flags, args);
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** prctl(2) with one argument (the rest zero): the result or -errno. */
  public static int prctl(int option, long arg2) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Prctl.HANDLE.invokeExact(st, option, arg2, 0L, 0L, 0L);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** open(2) of {@code path} with {@code flags} (mode 0): the fd or -errno. */
  public static int open(String path, int flags) {
    try (Arena a = Arena.ofConfined()) {
      return open(a.allocateFrom(path), flags);
    }
  }

  /** unshare(2) of the calling thread: 0 or -errno. */
  public static int unshare(int flags) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Unshare.HANDLE.invokeExact(st, flags);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * mount(2) with no data: 0 or -errno. {@code source} and {@code type} may be null (passed as
   * NULL).
   */
  public static int mount(String source, String target, String type, long flags) {
    MemorySegment st = STATE.get();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment src = source == null ? MemorySegment.NULL : a.allocateFrom(source);
      MemorySegment fsType = type == null ? MemorySegment.NULL : a.allocateFrom(type);
      int r =
          (int)
              Mount.HANDLE.invokeExact(
                  st, src, a.allocateFrom(target), fsType, flags, MemorySegment.NULL);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** mount_setattr(2) of {@code path} relative to the working directory: 0 or -errno. */
  public static int mountSetattr(String path, int flags, MemorySegment attr) {
    MemorySegment st = STATE.get();
    try (Arena a = Arena.ofConfined()) {
      long r =
          (long)
              SyscallIntPtrIntPtrLong.HANDLE.invokeExact(
                  st,
                  (long) SYS_MOUNT_SETATTR,
                  AT_FDCWD,
                  a.allocateFrom(path),
                  flags,
                  attr,
                  attr.byteSize());
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  private static final int SYS_MOUNT_SETATTR = 442; // x86-64, Linux 5.12; newer than the bindings
  public static final int AT_FDCWD = -100;

  // <linux/openat2.h> (Linux 5.6), newer than the bindings' 6.1-era headers carry as constants.
  private static final int SYS_OPENAT2 = 437; // x86-64
  public static final long RESOLVE_NO_MAGICLINKS = 0x02;
  public static final long RESOLVE_NO_SYMLINKS = 0x04;
  public static final long RESOLVE_BENEATH = 0x08;
  // struct open_how { __u64 flags; __u64 mode; __u64 resolve; }
  private static final long OPEN_HOW_SIZE = 24;

  /**
   * openat2(2) of {@code path} (a NUL-terminated string) relative to {@code dirfd}: the fd or
   * -errno (-ENOSYS before Linux 5.6).
   */
  public static int openat2(int dirfd, MemorySegment path, int flags, long resolve) {
    MemorySegment st = STATE.get();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment how = a.allocate(OPEN_HOW_SIZE, 8);
      how.set(LONG, 0, Integer.toUnsignedLong(flags));
      how.set(LONG, 8, 0L);
      how.set(LONG, 16, resolve);
      long r =
          (long)
              SyscallIntPtrPtrLong.HANDLE.invokeExact(
                  st, (long) SYS_OPENAT2, dirfd, path, how, OPEN_HOW_SIZE);
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * openat(2) of {@code path} relative to {@code dirfd} with {@code flags} (mode 0): fd or -errno.
   */
  public static int openat(int dirfd, MemorySegment path, int flags) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Openat.HANDLE.invokeExact(st, dirfd, path, flags, 0);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  // x86-64 struct stat: st_mode is the u32 at offset 24 of 144 bytes.
  private static final long STAT_SIZE = 144;
  private static final long STAT_MODE = 24;
  public static final int AT_SYMLINK_NOFOLLOW = 0x100;
  public static final int S_IFMT = 0170000;
  public static final int S_IFDIR = 0040000;
  public static final int S_IFREG = 0100000;
  public static final int S_IFLNK = 0120000;

  /**
   * fstatat(2) of {@code path} relative to {@code dirfd}: its st_mode (type and permission bits),
   * or -errno.
   */
  public static int fstatatMode(int dirfd, MemorySegment path, int flags) {
    MemorySegment st = STATE.get();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment buf = a.allocate(STAT_SIZE, 8);
      int r = (int) Fstatat.HANDLE.invokeExact(st, dirfd, path, buf, flags);
      return r < 0 ? -errno(st) : buf.get(INT, STAT_MODE);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** faccessat(2) of {@code path} relative to {@code dirfd} for {@code mode}: 0 or -errno. */
  public static int faccessat(int dirfd, MemorySegment path, int mode) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Faccessat.HANDLE.invokeExact(st, dirfd, path, mode, 0);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** setns(2) of the namespace {@code fd} refers to, of type {@code nstype}: 0 or -errno. */
  public static int setns(int fd, int nstype) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Setns.HANDLE.invokeExact(st, fd, nstype);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** bind(2) of socket {@code fd} to the {@code length} bytes of {@code address}: 0 or -errno. */
  public static int bind(int fd, MemorySegment address, int length) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Bind.HANDLE.invokeExact(st, fd, address, length);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * A raw system call with six integer or pointer arguments (pass a pointer as its {@link
   * MemorySegment#address()}): the result or -errno. For the calls without a libc wrapper of their
   * own, whose arguments are all integers or pointers.
   */
  public static long syscall(long nr, long a, long b, long c, long d, long e, long f) {
    MemorySegment st = STATE.get();
    try {
      long r = (long) SyscallLong6.HANDLE.invokeExact(st, nr, a, b, c, d, e, f);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * connect(2) of socket {@code fd} to the {@code length} bytes of {@code address}: 0 or -errno.
   */
  public static int connect(int fd, MemorySegment address, int length) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Connect.HANDLE.invokeExact(st, fd, address, length);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * getsockopt(2) of an int option, into {@code scratch} (at least 8 bytes): the value, or -errno
   * (every int option this is used for is non-negative).
   */
  public static int getsockoptInt(int fd, int level, int name, MemorySegment scratch) {
    MemorySegment st = STATE.get();
    try {
      scratch.set(ValueLayout.JAVA_INT, 4, 4); // socklen_t *optlen, after the value
      int r =
          (int) Getsockopt.HANDLE.invokeExact(st, fd, level, name, scratch, scratch.asSlice(4, 4));
      return r < 0 ? -errno(st) : scratch.get(ValueLayout.JAVA_INT, 0);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * getsockname(2) (or with {@code peer} getpeername(2)) into {@code address} (its whole size is
   * offered): the address's length, or -errno.
   */
  public static int socketAddress(int fd, boolean peer, MemorySegment address, MemorySegment len) {
    MemorySegment st = STATE.get();
    try {
      len.set(ValueLayout.JAVA_INT, 0, (int) address.byteSize());
      int r =
          peer
              ? (int) Getpeername.HANDLE.invokeExact(st, fd, address, len)
              : (int) Getsockname.HANDLE.invokeExact(st, fd, address, len);
      return r < 0 ? -errno(st) : len.get(ValueLayout.JAVA_INT, 0);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** listen(2): 0 or -errno. */
  public static int listen(int fd, int backlog) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Listen.HANDLE.invokeExact(st, fd, backlog);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** socket(2): the fd or -errno. */
  public static int socket(int domain, int type, int protocol) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Socket.HANDLE.invokeExact(st, domain, type, protocol);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** ioctl(2) with a pointer argument: the result or -errno. */
  public static int ioctl(int fd, long request, MemorySegment arg) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) IoctlPtr.HANDLE.invokeExact(st, fd, request, arg);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** mkdir(2) of {@code path} (a NUL-terminated string) with {@code mode}: 0 or -errno. */
  public static int mkdir(MemorySegment path, int mode) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Mkdir.HANDLE.invokeExact(st, path, mode);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** rmdir(2) of {@code path} (a NUL-terminated string): 0 or -errno. */
  public static int rmdir(MemorySegment path) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Rmdir.HANDLE.invokeExact(st, path);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** access(2) of {@code path} (a NUL-terminated string) for {@code mode}: 0 or -errno. */
  public static int access(MemorySegment path, int mode) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Access.HANDLE.invokeExact(st, path, mode);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  private static final int SYS_GETDENTS64 = 217; // x86-64

  /** getdents64(2) of the directory open at {@code fd} into {@code buf}: bytes read or -errno. */
  static long getdents64(int fd, MemorySegment buf) {
    MemorySegment st = STATE.get();
    try {
      long r =
          (long)
              SyscallIntPtrLong.HANDLE.invokeExact(
                  st, (long) SYS_GETDENTS64, fd, buf, buf.byteSize());
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** open(2) of {@code path} (a NUL-terminated string) with {@code flags}: the fd or -errno. */
  public static int open(MemorySegment path, int flags) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Open.HANDLE.invokeExact(st, path, flags, 0);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** grantpt(3): 0 or -errno. */
  public static int grantpt(int fd) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Grantpt.HANDLE.invokeExact(st, fd);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** unlockpt(3): 0 or -errno. */
  public static int unlockpt(int fd) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Unlockpt.HANDLE.invokeExact(st, fd);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** poll(2) on an array of {@code nfds} pollfd structs: the ready count, 0 or -errno. */
  public static int poll(MemorySegment fds, long nfds, int timeoutMillis) {
    MemorySegment st = STATE.get();
    try {
      int r = (int) Poll.HANDLE.invokeExact(st, fds, nfds, timeoutMillis);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  // x86-64 system call numbers the generated bindings do not carry.
  private static final int SYS_SETGROUPS = 116;
  private static final int SYS_SETRESUID = 117;
  private static final int SYS_SETRESGID = 119;
  private static final int SYS_CAPSET = 126;

  /**
   * capset(2) of the calling thread (the header's pid is 0): 0 or -errno. The system call changes
   * only the calling thread's credentials, unlike glibc's setuid family, which signals every thread
   * of the process to change theirs too.
   */
  public static int capset(MemorySegment header, MemorySegment data) {
    MemorySegment st = STATE.get();
    try {
      long r = (long) SyscallPtrPtr.HANDLE.invokeExact(st, (long) SYS_CAPSET, header, data);
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** setresuid(2) of the calling thread alone (the raw system call): 0 or -errno. */
  public static int setresuid(int uid) {
    return setres(SYS_SETRESUID, uid);
  }

  /** setresgid(2) of the calling thread alone (the raw system call): 0 or -errno. */
  public static int setresgid(int gid) {
    return setres(SYS_SETRESGID, gid);
  }

  private static int setres(int nr, int id) {
    MemorySegment st = STATE.get();
    try {
      long r = (long) Syscall3.HANDLE.invokeExact(st, (long) nr, id, id, id);
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * setgroups(2) of the calling thread alone (the raw system call) to {@code gids}: 0 or -errno.
   */
  public static int setgroups(int... gids) {
    MemorySegment st = STATE.get();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment list = gids.length == 0 ? MemorySegment.NULL : a.allocateFrom(INT, gids);
      long r = (long) SyscallIntPtr.HANDLE.invokeExact(st, (long) SYS_SETGROUPS, gids.length, list);
      return r < 0 ? -errno(st) : (int) r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** lchown(2) of {@code path} to {@code uid}:{@code gid} (-1 keeps one): 0 or -errno. */
  public static int lchown(String path, int uid, int gid) {
    MemorySegment st = STATE.get();
    try (Arena a = Arena.ofConfined()) {
      int r = (int) Lchown.HANDLE.invokeExact(st, a.allocateFrom(path), uid, gid);
      return r < 0 ? -errno(st) : r;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** gettid(2): the calling thread's kernel id. */
  public static int gettid() {
    try {
      return (int) Gettid.HANDLE.invokeExact();
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** strerror(3) of {@code errno}. */
  public static String strerror(int errno) {
    try {
      MemorySegment s = (MemorySegment) Strerror.HANDLE.invokeExact(errno);
      return s.reinterpret(1024).getString(0);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }
}
