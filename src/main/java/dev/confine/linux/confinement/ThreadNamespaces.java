package dev.confine.linux.confinement;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Availability;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.sys.Syscalls;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Per-thread namespaces for a confinement thread, as root: a private network namespace with only
 * loopback (up), and a private mount namespace in which every mount is read-only except the
 * writable paths. Both are entered by the calling thread alone ({@code unshare} without
 * CLONE_THREAD) and inherited by what it spawns afterwards; the JVM's other threads stay in the
 * host's namespaces. The confinement thread then gives up every capability ({@link Credentials}),
 * so a child running as root can neither {@code setns} back into the host's namespaces nor undo the
 * read-only mounts.
 *
 * <p>Without root (or without CAP_SYS_ADMIN, as in an unprivileged container) unshare fails with
 * EPERM; {@link #networkAvailability()} and {@link #mountAvailability()} say so, from a probe that
 * really enters the namespaces on a throwaway thread once per JVM.
 *
 * <p>Constants newer than, or absent from, the generated bindings are defined here from the kernel
 * UAPI (x86-64).
 */
public final class ThreadNamespaces {
  private ThreadNamespaces() {}

  static final int MS_SLAVE = 1 << 19; // linux/mount.h
  static final int MOUNT_ATTR_RDONLY = 0x1; // linux/mount.h, mount_setattr (5.12)
  static final int AT_SYMLINK_NOFOLLOW = 0x100;
  static final int AT_NO_AUTOMOUNT = 0x800;
  static final int AF_INET = 2;
  static final int SOCK_DGRAM = 2;
  static final int SOCK_CLOEXEC = 0x80000;
  static final long SIOCGIFFLAGS = 0x8913; // linux/sockios.h
  static final long SIOCSIFFLAGS = 0x8914;
  static final int IFF_UP = 0x1; // linux/if.h
  static final int IFNAMSIZ = 16;
  static final int IFREQ_SIZE = 40; // struct ifreq: char ifr_name[16]; union { short flags; ... }
  private static final int ENOENT = 2;

  /**
   * Whether this thread's children can get a private network namespace here, and if not why (not
   * root, no CAP_SYS_ADMIN, ...).
   */
  public static Availability networkAvailability() {
    return Probe.RESULT.network();
  }

  /** Whether this thread's children can get a private read-only mount namespace, and if not why. */
  public static Availability mountAvailability() {
    return Probe.RESULT.mount();
  }

  /**
   * Enters the namespaces on the calling thread, in this order: a new network namespace with
   * loopback up; a new mount namespace, made a slave of the host's (nothing done in it propagates
   * out), with each writable path bind-mounted onto itself and every other mount made read-only.
   * Must run before Landlock (a Landlock domain forbids mounting) and before the seccomp filter
   * (the loopback needs an AF_INET socket). Irreversible for the thread.
   *
   * @param network whether to enter a private network namespace
   * @param readOnlyHost whether to enter a private mount namespace with the host read-only
   * @param writable the absolute paths that stay writable in the mount namespace (missing ones are
   *     skipped)
   * @throws ConfinementException naming the call that failed and its errno
   */
  static void enter(boolean network, boolean readOnlyHost, List<String> writable) {
    if (network) {
      enterNetwork();
    }
    if (readOnlyHost) {
      enterReadOnlyMounts(writable);
    }
  }

  private static void enterNetwork() {
    int r = Syscalls.unshare(LibC.CLONE_NEWNET());
    if (r < 0) {
      throw new ConfinementException("netns", "unshare(CLONE_NEWNET)", -r);
    }
    loopbackUp();
  }

  /** Sets IFF_UP on "lo" in the calling thread's network namespace. */
  private static void loopbackUp() {
    int fd = Syscalls.socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      throw new ConfinementException("netns", "socket(AF_INET, SOCK_DGRAM)", -fd);
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment ifr = a.allocate(IFREQ_SIZE, 8);
      ifr.setString(0, "lo");
      int r = Syscalls.ioctl(fd, SIOCGIFFLAGS, ifr);
      if (r < 0) {
        throw new ConfinementException("netns", "ioctl(SIOCGIFFLAGS, lo)", -r);
      }
      short flags = ifr.get(ValueLayout.JAVA_SHORT, IFNAMSIZ);
      ifr.set(ValueLayout.JAVA_SHORT, IFNAMSIZ, (short) (flags | IFF_UP));
      r = Syscalls.ioctl(fd, SIOCSIFFLAGS, ifr);
      if (r < 0) {
        throw new ConfinementException("netns", "ioctl(SIOCSIFFLAGS, lo up)", -r);
      }
    } finally {
      Syscalls.close(fd);
    }
  }

  private static void enterReadOnlyMounts(List<String> writable) {
    // CLONE_NEWNS also gives the thread its own copy of the fs struct (root, cwd, umask): the
    // other threads keep theirs, and nothing in the JVM depends on sharing the working directory.
    int r = Syscalls.unshare(LibC.CLONE_NEWNS());
    if (r < 0) {
      throw new ConfinementException("mountns", "unshare(CLONE_NEWNS)", -r);
    }
    r = Syscalls.mount(null, "/", null, LibC.MS_REC() | MS_SLAVE);
    if (r < 0) {
      throw new ConfinementException("mountns", "mount(/, MS_REC | MS_SLAVE)", -r);
    }
    List<String> keep = outermost(writable);
    for (String w : keep) {
      if (w.equals("/")) {
        return; // everything is writable: nothing to make read-only
      }
      r = Syscalls.mount(w, w, null, LibC.MS_BIND() | LibC.MS_REC());
      if (r < 0 && -r != ENOENT) {
        throw new ConfinementException("mountns", "mount(" + w + ", MS_BIND | MS_REC)", -r);
      }
    }
    try (Arena a = Arena.ofConfined()) {
      // struct mount_attr { u64 attr_set; u64 attr_clr; u64 propagation; u64 userns_fd; }
      MemorySegment attr = a.allocate(32, 8);
      attr.set(ValueLayout.JAVA_LONG, 0, MOUNT_ATTR_RDONLY);
      for (String m : mountPoints(readThreadMountInfo())) {
        if (isAtOrBeneath(m, keep)) {
          continue;
        }
        // Only the read-only attribute changes; nosuid, nodev, noexec and atime stay as they are.
        r = Syscalls.mountSetattr(m, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, attr);
        if (r < 0 && -r != ENOENT) {
          throw new ConfinementException("mountns", "mount_setattr(" + m + ", RDONLY)", -r);
        }
      }
    }
  }

  /** The paths of {@code paths} that are not beneath another one of them, sorted. */
  static List<String> outermost(List<String> paths) {
    List<String> out = new ArrayList<>();
    for (String p : new TreeSet<>(paths)) {
      if (!isAtOrBeneath(p, out)) {
        out.add(p);
      }
    }
    return out;
  }

  /** Whether {@code path} equals one of {@code roots} or lies beneath one (whole components). */
  static boolean isAtOrBeneath(String path, List<String> roots) {
    Path p = Path.of(path);
    for (String r : roots) {
      if (p.startsWith(Path.of(r))) {
        return true;
      }
    }
    return false;
  }

  /**
   * The mount points (field 5) of a {@code /proc/.../mountinfo} text, in order, with the kernel's
   * octal escapes ({@code \040} for a space, {@code \134} for a backslash, ...) decoded.
   */
  static List<String> mountPoints(String mountinfo) {
    List<String> points = new ArrayList<>();
    for (String line : mountinfo.split("\n")) {
      String[] f = line.split(" ");
      if (f.length > 4) {
        points.add(unescape(f[4]));
      }
    }
    return points;
  }

  private static String unescape(String s) {
    if (s.indexOf('\\') < 0) {
      return s;
    }
    ByteArrayOutputStream b = new ByteArrayOutputStream(s.length());
    byte[] in = s.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < in.length; i++) {
      if (in[i] == '\\' && isOctal(in, i + 1)) {
        b.write(((in[i + 1] - '0') << 6) | ((in[i + 2] - '0') << 3) | (in[i + 3] - '0'));
        i += 3;
      } else {
        b.write(in[i]);
      }
    }
    return b.toString(StandardCharsets.UTF_8);
  }

  private static boolean isOctal(byte[] in, int from) {
    if (from + 3 > in.length) {
      return false;
    }
    for (int i = from; i < from + 3; i++) {
      if (in[i] < '0' || in[i] > '7') {
        return false;
      }
    }
    return true;
  }

  /**
   * The calling thread's mount table. /proc/self is the thread-group leader's view (the host's
   * namespace); /proc/thread-self is this thread's.
   */
  static String readThreadMountInfo() {
    String path = "/proc/thread-self/mountinfo";
    int fd = Syscalls.open(path, LibC.O_RDONLY() | LibC.O_CLOEXEC());
    if (fd < 0) {
      throw new ConfinementException("mountns", "open(" + path + ")", -fd);
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment buf = a.allocate(8192);
      ByteArrayOutputStream text = new ByteArrayOutputStream(8192);
      while (true) {
        long n = Syscalls.read(fd, buf, buf.byteSize());
        if (n < 0) {
          throw new ConfinementException("mountns", "read(" + path + ")", (int) -n);
        }
        if (n == 0) {
          return text.toString(StandardCharsets.UTF_8);
        }
        text.write(buf.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), 0, (int) n);
      }
    } finally {
      Syscalls.close(fd);
    }
  }

  /**
   * Enters both namespaces on a throwaway thread (it ends right after, and its namespaces with it):
   * the reasons they failed, {network, mount}, null where one worked.
   */
  private static String[] probeOnThrowawayThread() {
    return onThrowawayThread(
        "confine-namespace-probe",
        () ->
            new String[] {
              attempt(() -> enter(true, false, List.of())),
              attempt(() -> enter(false, true, List.of("/")))
            });
  }

  /**
   * Runs {@code task} on a new platform daemon thread named {@code name}, which ends right after
   * (and whatever it entered with it), and returns its result or throws what it threw; waits for it
   * without giving up on interrupt (the interrupt status is kept).
   */
  static <T> T onThrowawayThread(String name, Supplier<T> task) {
    Object[] outcome = new Object[1];
    Thread t =
        Thread.ofPlatform()
            .name(name)
            .daemon()
            .inheritInheritableThreadLocals(false)
            .unstarted(
                () -> {
                  try {
                    outcome[0] = task.get();
                  } catch (RuntimeException | Error e) {
                    outcome[0] = new Thrown(e);
                  }
                });
    t.start();
    boolean interrupted = false;
    while (t.isAlive()) {
      try {
        t.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (outcome[0] instanceof Thrown(RuntimeException e)) {
      throw e;
    }
    if (outcome[0] instanceof Thrown(Error e)) {
      throw e;
    }
    @SuppressWarnings("unchecked")
    T result = (T) outcome[0];
    return result;
  }

  /** What a throwaway thread's task threw. */
  private record Thrown(Throwable failure) {}

  private static String attempt(Runnable r) {
    try {
      r.run();
      return null;
    } catch (ConfinementException e) {
      return e.errno() == LibC.EPERM()
          ? "needs root with CAP_SYS_ADMIN (this JVM runs as uid " + uid() + "): " + e.getMessage()
          : e.getMessage();
    } catch (RuntimeException | LinkageError e) {
      return "namespaces could not be probed: " + e;
    }
  }

  private static String uid() {
    try {
      return String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
    } catch (IOException | UnsupportedOperationException e) {
      return "unknown";
    }
  }

  /** The outcome of the probe, computed on first use. */
  private record Probe(Availability network, Availability mount) {
    // A holder. The probe thread runs only ThreadNamespaces' own code (not this class's, whose
    // initialization waits for that thread).
    static final Probe RESULT = run();

    private static Probe run() {
      Availability engine = NativeAccess.availability();
      if (!engine.isAvailable()) {
        return new Probe(engine, engine);
      }
      // What the probe thread touches must not start a JVM thread from it (that thread would
      // live in the probe's namespaces): the common Cleaner behind automatic arenas (Syscalls'
      // per-thread errno state) is started here, on the caller, if nothing has started it yet.
      Arena.ofAuto().allocate(1);
      Syscalls.gettid();
      String[] causes = probeOnThrowawayThread();
      return new Probe(Availability.ofNullable(causes[0]), Availability.ofNullable(causes[1]));
    }
  }
}
