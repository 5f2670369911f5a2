package dev.confine.linux.proc;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Syscalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

/**
 * Reads the small files and directories of /proc with open/read/getdents64/close downcalls into
 * native buffers owned by this object, and parses them without creating Strings: the cost of a
 * sample is then the system calls, not the JDK's file machinery (about half the cost per file
 * against {@code Files.readString}).
 *
 * <p>Not thread-safe: one instance per sampler, used by one thread at a time. A process or thread
 * that no longer exists (ENOENT, ESRCH) is an ordinary answer ({@code false}); any other failure is
 * an {@link IOException} naming the path.
 */
@SuppressWarnings("restricted")
public final class ProcFiles {
  // glibc's values for sysconf's names (bits/confname.h), part of its stable ABI; the generated
  // bindings do not carry them.
  private static final int SC_CLK_TCK = 2;
  private static final int SC_PAGESIZE = 30;

  /** sysconf(_SC_CLK_TCK): the unit of the times in /proc/[pid]/stat (100 on Linux x86-64). */
  static final long CLOCK_TICKS_PER_SECOND = LibC.sysconf(SC_CLK_TCK);

  /** sysconf(_SC_PAGESIZE): the unit of rss in /proc/[pid]/stat. */
  static final long PAGE_SIZE = LibC.sysconf(SC_PAGESIZE);

  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
  private static final ValueLayout ADDR = ValueLayout.ADDRESS;

  // open, read and close are Syscalls' handles; called here with this sampler's capture state.
  private static final MethodHandle OPEN = Syscalls.openHandle();
  private static final MethodHandle READ = Syscalls.readHandle();
  private static final MethodHandle CLOSE = Syscalls.closeHandle();
  private static final MethodHandle GETDENTS64 =
      Syscalls.bind("getdents64", FunctionDescriptor.of(LONG, INT, ADDR, LONG));
  private static final MethodHandle GETSID =
      Syscalls.bind("getsid", FunctionDescriptor.of(INT, INT));

  private static final int FILE_BUFFER = 4096;
  private static final int DIR_BUFFER = 32 * 1024;
  private static final int PATH_BUFFER = 64;
  // struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16, d_type u8, d_name[].
  private static final int DIRENT_RECLEN = 16;
  private static final int DIRENT_NAME = 19;
  private static final byte[] PROC = bytes("/proc/");
  private static final byte[] STAT = bytes("/stat");
  private static final byte[] TASK = bytes("/task");
  private static final byte[] TASK_SLASH = bytes("/task/");
  private static final byte[] CHILDREN = bytes("/children");

  private final MemorySegment callState;
  private final MemorySegment path;
  private final MemorySegment fileBuffer;
  private final MemorySegment dirBuffer;
  private final byte[] scratch = new byte[DIR_BUFFER];

  /** The fields of /proc/[pid]/stat a sampler needs; refilled by {@link #readStat}. */
  public static final class Stat {
    /** Field 3: R, S, D, Z, T, ... */
    char state;

    /** Field 4. */
    int ppid;

    /** Field 5. */
    int pgrp;

    /** Field 6. */
    int session;

    /** Field 11: minor faults of the children it waited for (0: it reaped none). */
    public long cminflt;

    /** Fields 14-17, in clock ticks; c* are the totals of reaped children. */
    long utime;

    long stime;
    long cutime;
    long cstime;

    /** Field 20. */
    public int numThreads;

    /** Field 22: clock ticks after boot; with the pid it names one process for its lifetime. */
    long startTime;

    /** Field 24: resident pages. */
    long rssPages;
  }

  public ProcFiles() {
    Arena arena = Arena.ofAuto();
    callState = arena.allocate(Syscalls.CAPTURE);
    path = arena.allocate(PATH_BUFFER);
    fileBuffer = arena.allocate(FILE_BUFFER);
    dirBuffer = arena.allocate(DIR_BUFFER, 8);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * Fails unless /proc is mounted and readable and the kernel has {@code
   * /proc/[pid]/task/[tid]/children} (CONFIG_PROC_CHILDREN), which membership tracking needs.
   */
  void checkAvailable() throws IOException {
    int fd = open(cString("/proc/self/stat"), LibC.O_RDONLY() | LibC.O_CLOEXEC());
    if (fd < 0) {
      throw failure("/proc is not mounted or not readable: open /proc/self/stat", -fd);
    }
    close(fd);
    fd = open(cString("/proc/thread-self/children"), LibC.O_RDONLY() | LibC.O_CLOEXEC());
    if (fd < 0) {
      throw failure(
          "this kernel has no /proc/[pid]/task/[tid]/children (CONFIG_PROC_CHILDREN), which"
              + " process-tree sampling needs: open /proc/thread-self/children",
          -fd);
    }
    close(fd);
  }

  /**
   * Reads and parses /proc/[pid]/stat into {@code out}.
   *
   * @return false when the process does not exist (any more)
   */
  public boolean readStat(int pid, Stat out) throws IOException {
    int end = putPath(PROC, 0);
    end = putInt(pid, end);
    end = putPath(STAT, end);
    terminate(end);
    int fd = open(path, LibC.O_RDONLY() | LibC.O_CLOEXEC());
    if (fd < 0) {
      return absent(-fd, "open");
    }
    int n = 0;
    try {
      // One read returns the whole line; a line ends with '\n', so a short read without one
      // means the kernel has more to give.
      while (n < FILE_BUFFER) {
        long r = read(fd, fileBuffer.asSlice(n), FILE_BUFFER - n);
        if (r < 0) {
          if (-r == LibC.EINTR()) {
            continue;
          }
          return absent((int) -r, "read");
        }
        if (r == 0) {
          break;
        }
        n += (int) r;
        if (fileBuffer.get(ValueLayout.JAVA_BYTE, n - 1) == '\n') {
          break;
        }
      }
    } finally {
      close(fd);
    }
    MemorySegment.copy(fileBuffer, ValueLayout.JAVA_BYTE, 0, scratch, 0, n);
    if (n == 0) {
      return false; // an exiting process can show an empty file
    }
    parseStat(scratch, n, out);
    return true;
  }

  /**
   * Parses one /proc/[pid]/stat line: the fields after the LAST ')' (the command name in
   * parentheses may itself contain spaces and parentheses).
   */
  static void parseStat(byte[] b, int n, Stat out) throws IOException {
    int i = n - 1;
    while (i >= 0 && b[i] != ')') {
      i--;
    }
    if (i < 0 || i + 3 >= n) {
      throw new IOException(
          "malformed /proc stat line: " + new String(b, 0, n, StandardCharsets.US_ASCII));
    }
    out.state = (char) b[i + 2];
    i += 4; // ") S "
    int field = 4;
    while (field <= 24 && i < n) {
      boolean negative = b[i] == '-';
      if (negative) {
        i++;
      }
      long v = 0;
      while (i < n && b[i] >= '0' && b[i] <= '9') {
        v = v * 10 + (b[i] - '0');
        i++;
      }
      if (negative) {
        v = -v;
      }
      switch (field) {
        case 4 -> out.ppid = (int) v;
        case 5 -> out.pgrp = (int) v;
        case 6 -> out.session = (int) v;
        case 11 -> out.cminflt = v;
        case 14 -> out.utime = v;
        case 15 -> out.stime = v;
        case 16 -> out.cutime = v;
        case 17 -> out.cstime = v;
        case 20 -> out.numThreads = (int) v;
        case 22 -> out.startTime = v;
        case 24 -> out.rssPages = v;
        default -> {}
      }
      field++;
      i++; // the separating space
    }
    if (field <= 24) {
      throw new IOException(
          "short /proc stat line: " + new String(b, 0, n, StandardCharsets.US_ASCII));
    }
  }

  /**
   * Appends the pids in /proc/[pid]/task/[tid]/children (the children that thread forked) to {@code
   * out}.
   *
   * @return false when the thread does not exist (any more)
   */
  public boolean readChildren(int pid, int tid, PidList out) throws IOException {
    int end = putPath(PROC, 0);
    end = putInt(pid, end);
    end = putPath(TASK_SLASH, end);
    end = putInt(tid, end);
    end = putPath(CHILDREN, end);
    terminate(end);
    int fd = open(path, LibC.O_RDONLY() | LibC.O_CLOEXEC());
    if (fd < 0) {
      return absent(-fd, "open");
    }
    try {
      // "12 345 6789 ": the list can outgrow the buffer, so a number may span two reads.
      int value = 0;
      boolean inNumber = false;
      while (true) {
        long r = read(fd, fileBuffer, FILE_BUFFER);
        if (r < 0) {
          if (-r == LibC.EINTR()) {
            continue;
          }
          return absent((int) -r, "read");
        }
        if (r == 0) {
          break;
        }
        int n = (int) r;
        MemorySegment.copy(fileBuffer, ValueLayout.JAVA_BYTE, 0, scratch, 0, n);
        for (int i = 0; i < n; i++) {
          byte c = scratch[i];
          if (c >= '0' && c <= '9') {
            value = value * 10 + (c - '0');
            inNumber = true;
          } else if (inNumber) {
            out.add(value);
            value = 0;
            inNumber = false;
          }
        }
      }
      if (inNumber) {
        out.add(value);
      }
      return true;
    } finally {
      close(fd);
    }
  }

  /**
   * Appends the numeric entries of /proc (every process) to {@code out}.
   *
   * @throws IOException when /proc cannot be listed
   */
  void listProcesses(PidList out) throws IOException {
    int end = putPath(PROC, 0);
    terminate(end - 1); // "/proc"
    if (!listNumeric(out)) {
      throw new IOException("cannot list /proc: it does not exist");
    }
  }

  /**
   * Appends the thread ids in /proc/[pid]/task to {@code out}.
   *
   * @return false when the process does not exist (any more)
   */
  boolean listThreads(int pid, PidList out) throws IOException {
    int end = putPath(PROC, 0);
    end = putInt(pid, end);
    end = putPath(TASK, end);
    terminate(end);
    return listNumeric(out);
  }

  /**
   * getsid(2): the session of {@code pid}, or -1 when it does not exist (any more). Linux answers
   * for any process, in any session.
   */
  int sessionOf(int pid) throws IOException {
    int r;
    try {
      r = (int) GETSID.invokeExact(callState, pid);
    } catch (Throwable t) {
      throw Syscalls.rethrow(t);
    }
    if (r >= 0) {
      return r;
    }
    int errno = errno();
    if (errno == LibC.ESRCH()) {
      return -1;
    }
    throw new IOException("getsid(" + pid + "): " + Syscalls.strerror(errno));
  }

  private boolean listNumeric(PidList out) throws IOException {
    int fd = open(path, LibC.O_RDONLY() | LibC.O_DIRECTORY() | LibC.O_CLOEXEC());
    if (fd < 0) {
      return absent(-fd, "open");
    }
    try {
      while (true) {
        long r = getdents64(fd, dirBuffer, DIR_BUFFER);
        if (r < 0) {
          if (-r == LibC.EINTR()) {
            continue;
          }
          return absent((int) -r, "getdents64");
        }
        if (r == 0) {
          return true;
        }
        int n = (int) r;
        MemorySegment.copy(dirBuffer, ValueLayout.JAVA_BYTE, 0, scratch, 0, n);
        int off = 0;
        while (off < n) {
          int recLen =
              (scratch[off + DIRENT_RECLEN] & 0xff)
                  | (scratch[off + DIRENT_RECLEN + 1] & 0xff) << 8;
          int i = off + DIRENT_NAME;
          int value = 0;
          boolean numeric = scratch[i] != 0;
          for (byte c; (c = scratch[i]) != 0; i++) {
            if (c < '0' || c > '9') {
              numeric = false;
              break;
            }
            value = value * 10 + (c - '0');
          }
          if (numeric) {
            out.add(value);
          }
          off += recLen;
        }
      }
    } finally {
      close(fd);
    }
  }

  /** False for "no such process or thread"; an IOException naming the path for anything else. */
  private boolean absent(int errno, String call) throws IOException {
    if (errno == LibC.ENOENT() || errno == LibC.ESRCH()) {
      return false;
    }
    throw failure(call + " " + path.getString(0), errno);
  }

  private static IOException failure(String what, int errno) {
    return new IOException(what + ": " + Syscalls.strerror(errno) + " (errno " + errno + ")");
  }

  private int putPath(byte[] part, int at) {
    MemorySegment.copy(part, 0, path, ValueLayout.JAVA_BYTE, at, part.length);
    return at + part.length;
  }

  private int putInt(int value, int at) {
    int digits = 1;
    for (int v = value; v >= 10; v /= 10) {
      digits++;
    }
    for (int i = at + digits - 1, v = value; i >= at; i--, v /= 10) {
      path.set(ValueLayout.JAVA_BYTE, i, (byte) ('0' + v % 10));
    }
    return at + digits;
  }

  private void terminate(int at) {
    path.set(ValueLayout.JAVA_BYTE, at, (byte) 0);
  }

  private MemorySegment cString(String s) {
    byte[] b = bytes(s);
    terminate(putPath(b, 0));
    return path;
  }

  private int errno() {
    return Syscalls.errno(callState);
  }

  /** open(2): the fd or -errno. */
  private int open(MemorySegment p, int flags) {
    try {
      int r = (int) OPEN.invokeExact(callState, p, flags, 0);
      return r < 0 ? -errno() : r;
    } catch (Throwable t) {
      throw Syscalls.rethrow(t);
    }
  }

  /** read(2): bytes read, 0 at end of file, or -errno. */
  private long read(int fd, MemorySegment buf, long len) {
    try {
      long r = (long) READ.invokeExact(callState, fd, buf, len);
      return r < 0 ? -errno() : r;
    } catch (Throwable t) {
      throw Syscalls.rethrow(t);
    }
  }

  /** getdents64(2): bytes of entries, 0 at the end, or -errno. */
  private long getdents64(int fd, MemorySegment buf, long len) {
    try {
      long r = (long) GETDENTS64.invokeExact(callState, fd, buf, len);
      return r < 0 ? -errno() : r;
    } catch (Throwable t) {
      throw Syscalls.rethrow(t);
    }
  }

  private void close(int fd) {
    try {
      int unused = (int) CLOSE.invokeExact(callState, fd);
    } catch (Throwable t) {
      throw Syscalls.rethrow(t);
    }
  }
}
