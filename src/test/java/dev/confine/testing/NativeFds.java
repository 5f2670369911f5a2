package dev.confine.testing;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.pollfd;
import dev.confine.linux.sys.Syscalls;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Raw file descriptors for the engine's unit tests: pipes, reads and writes with a deadline (a
 * stuck child fails the test instead of hanging it), and what {@code /proc} says an fd is.
 */
public final class NativeFds {
  /** How long a test waits for something that should happen at once. */
  public static final Duration WAIT = Duration.ofSeconds(30);

  private NativeFds() {}

  /** A new pipe, O_CLOEXEC: {read end, write end}. */
  public static int[] pipe() {
    return Syscalls.pipe2(LibC.O_CLOEXEC());
  }

  /** Closes each fd that is not negative. */
  public static void closeAll(int... fds) {
    for (int fd : fds) {
      if (fd >= 0) {
        Syscalls.close(fd);
      }
    }
  }

  /** Writes all of {@code bytes} to {@code fd}, a blocking fd. */
  public static void writeFully(int fd, byte[] bytes) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment buf = a.allocate(Math.max(1, bytes.length));
      MemorySegment.copy(bytes, 0, buf, ValueLayout.JAVA_BYTE, 0, bytes.length);
      long off = 0;
      while (off < bytes.length) {
        long n = Syscalls.write(fd, buf.asSlice(off), bytes.length - off);
        if (n == -LibC.EINTR()) {
          continue;
        }
        if (n < 0) {
          throw new IllegalStateException("write(" + fd + "): " + Syscalls.strerror((int) -n));
        }
        off += n;
      }
    }
  }

  /** write(2) of {@code bytes} once: the count or -errno. */
  public static long writeOnce(int fd, byte[] bytes) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment buf = a.allocateFrom(ValueLayout.JAVA_BYTE, bytes);
      return Syscalls.write(fd, buf, bytes.length);
    }
  }

  /** read(2) of at most {@code max} bytes once; null at end of file; throws on an error. */
  public static byte[] readOnce(int fd, int max) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment buf = a.allocate(max);
      long n = Syscalls.read(fd, buf, max);
      if (n < 0) {
        throw new IllegalStateException("read(" + fd + "): " + Syscalls.strerror((int) -n));
      }
      return n == 0 ? null : buf.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
    }
  }

  /**
   * Waits until {@code fd} polls with one of {@code events}, at most {@code timeout}.
   *
   * @return the revents, or 0 when the time ran out
   */
  public static int awaitPoll(int fd, int events, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment p = pollfd.allocate(a);
      while (true) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return 0;
        }
        pollfd.fd(p, fd);
        pollfd.events(p, (short) events);
        pollfd.revents(p, (short) 0);
        int r = Syscalls.poll(p, 1, (int) Math.min(1_000, left / 1_000_000 + 1));
        if (r > 0) {
          return Short.toUnsignedInt(pollfd.revents(p));
        }
        if (r < 0 && r != -LibC.EINTR()) {
          throw new IllegalStateException("poll(" + fd + "): " + Syscalls.strerror(-r));
        }
      }
    }
  }

  /** The revents of {@code fd} for {@code events} now, without waiting: 0 when not ready. */
  public static int pollNow(int fd, int events) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment p = pollfd.allocate(a);
      pollfd.fd(p, fd);
      pollfd.events(p, (short) events);
      int r = Syscalls.poll(p, 1, 0);
      if (r < 0) {
        throw new IllegalStateException("poll(" + fd + "): " + Syscalls.strerror(-r));
      }
      return r == 0 ? 0 : Short.toUnsignedInt(pollfd.revents(p));
    }
  }

  /**
   * Reads {@code fd} (a blocking pipe or pty end) until end of file (or, for a pty master, EIO),
   * failing when that takes longer than {@code timeout}.
   */
  public static byte[] readToEnd(int fd, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment buf = a.allocate(64 * 1024);
      while (true) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || awaitPoll(fd, LibC.POLLIN(), Duration.ofNanos(left)) == 0) {
          throw new AssertionError(
              "no end of file on fd " + fd + " within " + timeout + "; read so far: " + out);
        }
        long n = Syscalls.read(fd, buf, buf.byteSize());
        if (n == 0 || n == -LibC.EIO()) {
          return out.toByteArray();
        }
        if (n == -LibC.EINTR() || n == -LibC.EAGAIN()) {
          continue;
        }
        if (n < 0) {
          throw new IllegalStateException("read(" + fd + "): " + Syscalls.strerror((int) -n));
        }
        out.write(buf.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), 0, (int) n);
      }
    }
  }

  /** Whether {@code fd} is open in this process (F_GETFD succeeds). */
  public static boolean isOpen(int fd) {
    return Syscalls.fcntl(fd, LibC.F_GETFD(), 0) >= 0;
  }

  /** Whether {@code fd} is open with FD_CLOEXEC. */
  public static boolean isCloexec(int fd) {
    int flags = Syscalls.fcntl(fd, LibC.F_GETFD(), 0);
    if (flags < 0) {
      throw new IllegalStateException("fd " + fd + " is not open");
    }
    return (flags & LibC.FD_CLOEXEC()) != 0;
  }

  /** What fd {@code fd} of process {@code pid} is ({@code pipe:[123]}, a path ...), or null. */
  public static String target(long pid, int fd) {
    try {
      return Files.readSymbolicLink(Path.of("/proc/" + pid + "/fd/" + fd)).toString();
    } catch (IOException e) {
      return null;
    }
  }

  /** What this process's fd {@code fd} is, or null when it is not open. */
  public static String target(int fd) {
    return target(ProcessHandle.current().pid(), fd);
  }

  /** The fd numbers open in process {@code pid}. */
  public static Set<Integer> openIn(long pid) {
    try (Stream<Path> s = Files.list(Path.of("/proc/" + pid + "/fd"))) {
      Set<Integer> fds = new TreeSet<>();
      s.forEach(p -> fds.add(Integer.parseInt(p.getFileName().toString())));
      return fds;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The fds of this process that are {@code target} ({@link #target(int)}). */
  public static Set<Integer> openAs(String target) {
    Set<Integer> found = new TreeSet<>();
    for (int fd : openIn(ProcessHandle.current().pid())) {
      if (target.equals(target(fd))) {
        found.add(fd);
      }
    }
    return found;
  }
}
