package dev.confine.linux.cgroup;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Syscalls;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * The file operations of a tree cgroup (small reads and writes of control files, mkdir, rmdir) as
 * plain system calls: a capped exec makes about twenty of them, each several times cheaper than
 * through java.nio.file (docs/benchmarks.md). Failures are the IOExceptions java.nio.file would
 * throw: {@link NoSuchFileException}, {@link FileAlreadyExistsException}, else an IOException
 * naming the file and the errno.
 */
final class CgroupFiles {
  private static final int PAGE = 4096;

  private CgroupFiles() {}

  /** Writes {@code value} to the control file {@code file} in one write, as the kernel wants. */
  static void write(Path file, String value) throws IOException {
    int fd = open(file, true);
    try {
      write(fd, file, value);
    } finally {
      Syscalls.close(fd);
    }
  }

  /** The whole content of the control file {@code file}: most fit one page, read in pages. */
  static String read(Path file) throws IOException {
    int fd = open(file, false);
    try {
      return read(fd, file);
    } finally {
      Syscalls.close(fd);
    }
  }

  /**
   * Opens the control file {@code file} for {@link #read(int, Path)} or {@link #write(int, Path,
   * String)} again and again, saving the open and close of each access.
   */
  static int open(Path file, boolean forWriting) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      int flags = (forWriting ? LibC.O_WRONLY() : LibC.O_RDONLY()) | LibC.O_CLOEXEC();
      int fd = Syscalls.open(path(arena, file), flags);
      if (fd < 0) {
        throw failure("open", file, -fd);
      }
      return fd;
    }
  }

  /** Writes {@code value} in one write to {@code file}, open at {@code fd}. */
  static void write(int fd, Path file, String value) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      byte[] bytes = value.getBytes(StandardCharsets.US_ASCII);
      MemorySegment buf = arena.allocate(Math.max(1, bytes.length));
      MemorySegment.copy(bytes, 0, buf, ValueLayout.JAVA_BYTE, 0, bytes.length);
      long n = Syscalls.pwrite(fd, buf, bytes.length, 0);
      if (n < 0) {
        throw failure("write", file, (int) -n);
      }
    }
  }

  /** The whole content of {@code file}, open at {@code fd}, generated afresh (read from 0). */
  static String read(int fd, Path file) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment page = arena.allocate(PAGE);
      ByteArrayOutputStream content = null;
      long offset = 0;
      while (true) {
        long n = Syscalls.pread(fd, page, PAGE, offset);
        if (n == -LibC.EINTR()) {
          continue;
        }
        if (n < 0) {
          throw failure("read", file, (int) -n);
        }
        if (n < PAGE && content == null) { // the common case: all of it in one page
          return new String(
              page.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII);
        }
        if (content == null) {
          content = new ByteArrayOutputStream(2 * PAGE);
        }
        if (n == 0) {
          return content.toString(StandardCharsets.US_ASCII);
        }
        content.write(page.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), 0, (int) n);
        offset += n;
      }
    }
  }

  /** The lines of {@code file}. */
  static List<String> readLines(Path file) throws IOException {
    return read(file).lines().toList();
  }

  /** Creates the directory {@code dir} (mode 0755). */
  static void mkdir(Path dir) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      int r = Syscalls.mkdir(path(arena, dir), 0755);
      if (r < 0) {
        throw failure("mkdir", dir, -r);
      }
    }
  }

  /** Removes the directory {@code dir}; false when it did not exist. */
  static boolean rmdirIfExists(Path dir) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      int r = Syscalls.rmdir(path(arena, dir));
      if (r == -LibC.ENOENT()) {
        return false;
      }
      if (r < 0) {
        throw failure("rmdir", dir, -r);
      }
      return true;
    }
  }

  /** Whether {@code file} exists. */
  static boolean exists(Path file) {
    try (Arena arena = Arena.ofConfined()) {
      return Syscalls.access(path(arena, file), 0) == 0; // F_OK
    }
  }

  private static MemorySegment path(Arena arena, Path p) {
    return arena.allocateFrom(p.toString());
  }

  private static IOException failure(String call, Path file, int errno) {
    if (errno == LibC.ENOENT()) {
      return new NoSuchFileException(file.toString());
    }
    if (errno == LibC.EEXIST()) {
      return new FileAlreadyExistsException(file.toString());
    }
    return new IOException(call + " " + file + ": " + Syscalls.strerror(errno));
  }
}
