package dev.confine.linux.sys;

import dev.confine.linux.libc.LibC;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * Directory checks made with plain system calls, for paths hot enough that the cost of {@code
 * java.nio}'s directory stream shows (docs/benchmarks.md).
 */
public final class Directories {
  private static final long D_RECLEN = 16; // struct linux_dirent64: u64 ino, s64 off, u16 reclen
  private static final long D_NAME = 19; // ... u8 type, then the NUL-terminated name

  private Directories() {}

  /**
   * Whether {@code dir} is a directory holding nothing but {@code .} and {@code ..}; false when it
   * holds anything else or cannot be opened and read (a symbolic link is not followed).
   */
  public static boolean isEmpty(Path dir) {
    try (Arena a = Arena.ofConfined()) {
      int fd =
          Syscalls.open(
              a.allocateFrom(dir.toString()),
              LibC.O_RDONLY() | LibC.O_DIRECTORY() | LibC.O_NOFOLLOW() | LibC.O_CLOEXEC());
      if (fd < 0) {
        return false;
      }
      try {
        MemorySegment buf = a.allocate(1024, 8);
        while (true) {
          long n = Syscalls.getdents64(fd, buf);
          if (n == 0) {
            return true;
          }
          if (n < 0) {
            return false;
          }
          for (long off = 0; off < n; ) {
            if (!isDot(buf, off + D_NAME)) {
              return false;
            }
            off += Short.toUnsignedInt(buf.get(ValueLayout.JAVA_SHORT_UNALIGNED, off + D_RECLEN));
          }
        }
      } finally {
        Syscalls.close(fd);
      }
    }
  }

  /** Whether the name at {@code name} is "." or "..". */
  private static boolean isDot(MemorySegment buf, long name) {
    if (buf.get(ValueLayout.JAVA_BYTE, name) != '.') {
      return false;
    }
    byte second = buf.get(ValueLayout.JAVA_BYTE, name + 1);
    return second == 0 || (second == '.' && buf.get(ValueLayout.JAVA_BYTE, name + 2) == 0);
  }
}
