package dev.confine.linux.spawn;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import java.io.Serial;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * A child's working directory as an open directory fd, opened beneath a root so that no symlink (or
 * swapped directory) met on the way leads out of it, and entered by the child with fchdir: the
 * directory that was opened is the one the child starts in, whatever changes in the tree after the
 * open.
 *
 * <p>The root is opened by its path with no symlink followed at all (it was resolved when the
 * runner was built, so a symlink in it now means it was moved or replaced since); the work dir
 * beneath it with {@code openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)}: symlinks are followed
 * only while they stay beneath the root, and ".." never climbs above it. Where the kernel has no
 * openat2 (before Linux 5.6) each component is opened with {@code O_NOFOLLOW} instead, which
 * refuses every symlink ({@code ELOOP}) and every ".." that would climb above the root ({@code
 * EXDEV}).
 *
 * <p>The fd is {@code O_PATH | O_CLOEXEC}: it grants nothing beyond naming the directory (fchdir on
 * an O_PATH fd works since Linux 3.5 and checks search permission as chdir does), no other child
 * inherits it across exec, and the spawn's closefrom closes it in the child it is for. It is closed
 * exactly once: by {@link #close}, or, when a spawn still uses it then, by the end of that spawn (a
 * spawn handed to a confinement thread can outlive its caller's wait).
 */
public final class WorkDirectory implements AutoCloseable {
  private static final int ELOOP = 40;
  private static final int EXDEV = 18;
  private static final int AGAIN_TRIES = 16;
  private static final int O_PATH_DIR = LibC.O_PATH() | LibC.O_DIRECTORY() | LibC.O_CLOEXEC();
  // Probed once: ENOSYS before Linux 5.6, and ENOSYS or EPERM where a container's seccomp profile
  // predates the call.
  private static final boolean OPENAT2 = probeOpenat2();

  private final int fd;
  private final String shown;
  private int users; // under this
  private boolean closed; // under this

  private WorkDirectory(int fd, String shown) {
    this.fd = fd;
    this.shown = shown;
  }

  /** Which part of the path could not be opened. */
  public enum Part {
    /** The root itself. */
    ROOT,
    /** The path beneath the root. */
    BENEATH
  }

  /**
   * The work dir could not be opened.
   *
   * <p>For {@link Part#BENEATH}: {@code EXDEV} means the path leads out of the root (a symlink to
   * an absolute path or out through "..", or a ".." above the root), {@code ELOOP} too many
   * symlinks (or, without openat2, any symlink), {@code ENOENT} and {@code ENOTDIR} a missing
   * component or a non-directory. For {@link Part#ROOT}: {@code ELOOP} means a symlink now lies on
   * the root's path.
   */
  public static final class OpenFailed extends ErrnoException {
    @Serial private static final long serialVersionUID = 1L;

    private final Part part;

    OpenFailed(Part part, String path, int errno) {
      super((part == Part.ROOT ? "open root " : "open work dir ") + path, errno);
      this.part = part;
    }

    /** Which part failed. */
    public Part part() {
      return part;
    }
  }

  /**
   * Opens {@code beneath} (relative; empty or "." for the root itself) beneath {@code root} (an
   * absolute path). Both are {@link dev.confine.ByteStrings}: their bytes are used exactly.
   *
   * @throws OpenFailed when either part cannot be opened
   */
  public static WorkDirectory open(String root, String beneath) {
    return open(root, beneath, OPENAT2);
  }

  /** Whether work dirs are opened with openat2 here (else component by component). */
  public static boolean usesOpenat2() {
    return OPENAT2;
  }

  private static boolean probeOpenat2() {
    try (Arena a = Arena.ofConfined()) {
      int fd = Syscalls.openat2(Syscalls.AT_FDCWD, a.allocateFrom("/"), O_PATH_DIR, 0);
      if (fd >= 0) {
        Syscalls.close(fd);
        return true;
      }
      return fd != -LibC.ENOSYS() && fd != -LibC.EPERM();
    }
  }

  /** As {@link #open(String, String)}, with openat2 or with the component walk. */
  static WorkDirectory open(String root, String beneath, boolean openat2) {
    String rel = beneath == null || beneath.isEmpty() ? "." : beneath;
    String shown = rel.equals(".") ? root : (root.endsWith("/") ? root : root + "/") + rel;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment cRoot = Spawner.cString(a, root);
      MemorySegment cRel = Spawner.cString(a, rel);
      int rootFd =
          openat2
              ? again(
                  () ->
                      Syscalls.openat2(
                          Syscalls.AT_FDCWD,
                          cRoot,
                          O_PATH_DIR,
                          Syscalls.RESOLVE_NO_SYMLINKS | Syscalls.RESOLVE_NO_MAGICLINKS))
              : walk(-1, root, a);
      if (rootFd < 0) {
        throw new OpenFailed(Part.ROOT, root, -rootFd);
      }
      try {
        int fd =
            openat2
                ? again(
                    () ->
                        Syscalls.openat2(
                            rootFd,
                            cRel,
                            O_PATH_DIR,
                            Syscalls.RESOLVE_BENEATH | Syscalls.RESOLVE_NO_MAGICLINKS))
                : walk(rootFd, rel, a);
        if (fd < 0) {
          throw new OpenFailed(Part.BENEATH, shown, -fd);
        }
        return new WorkDirectory(fd, shown);
      } finally {
        Syscalls.close(rootFd);
      }
    }
  }

  /**
   * openat2 fails with EAGAIN when a rename or mount raced the lookup; it may simply be retried.
   */
  private static int again(IntSupplier call) {
    int r = call.getAsInt();
    for (int i = 1; i < AGAIN_TRIES && r == -LibC.EAGAIN(); i++) {
      r = call.getAsInt();
    }
    return r;
  }

  /**
   * Opens {@code path} component by component with O_NOFOLLOW: from "/" when {@code fromFd} is -1
   * ({@code path} absolute), else beneath {@code fromFd} (which stays open), ".." resolved
   * lexically (exact when no symlink is followed) and refused above the start.
   *
   * @return the fd or -errno
   */
  private static int walk(int fromFd, String path, Arena a) {
    List<String> names = new ArrayList<>();
    for (String name : path.split("/")) {
      if (name.isEmpty() || name.equals(".")) {
        continue;
      }
      if (name.equals("..")) {
        if (names.isEmpty()) {
          if (fromFd < 0) {
            continue; // "/.." is "/"
          }
          return -EXDEV;
        }
        names.removeLast();
        continue;
      }
      names.add(name);
    }
    int fd =
        fromFd < 0
            ? Syscalls.open(a.allocateFrom("/"), O_PATH_DIR)
            : Syscalls.openat(fromFd, a.allocateFrom("."), O_PATH_DIR);
    for (String name : names) {
      if (fd < 0) {
        return fd;
      }
      MemorySegment cName = Spawner.cString(a, name);
      int next = Syscalls.openat(fd, cName, O_PATH_DIR | LibC.O_NOFOLLOW());
      if (next == -LibC.ENOTDIR()) {
        // O_NOFOLLOW with O_DIRECTORY reports a symlink as ENOTDIR; say what it is.
        int mode = Syscalls.fstatatMode(fd, cName, Syscalls.AT_SYMLINK_NOFOLLOW);
        if (mode >= 0 && (mode & Syscalls.S_IFMT) == Syscalls.S_IFLNK) {
          next = -ELOOP;
        }
      }
      Syscalls.close(fd);
      fd = next;
    }
    return fd;
  }

  /** The directory's path as it was opened, for messages. */
  public String shown() {
    return shown;
  }

  /** The fd, for lookups relative to it by its owner before {@link #close}. */
  int fd() {
    return fd;
  }

  /** The fd for a spawn, kept open until {@link #release}; -1 when this was closed already. */
  synchronized int acquire() {
    if (closed) {
      return -1;
    }
    users++;
    return fd;
  }

  /** Ends a use begun by {@link #acquire}; the last one after {@link #close} closes the fd. */
  synchronized void release() {
    if (--users == 0 && closed) {
      Syscalls.close(fd);
    }
  }

  /** Closes the fd now, or when the spawn that uses it ends. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (users == 0) {
      Syscalls.close(fd);
    }
  }

  @Override
  public String toString() {
    return "WorkDirectory[" + shown + "]";
  }
}
