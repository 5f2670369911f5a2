package dev.confine.confined;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.confinement.Credentials;
import dev.confine.linux.sys.Directories;
import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The private TMPDIRs of one confined runner's execs and sessions: directories {@code exec-N}, mode
 * 0700 and owned by the user the children run as, in a parent {@code
 * confine-scratch-<pid>-<random>} under the system's temporary directory, one per exec in flight,
 * emptied after their exec and reused. What an exec left is emptied in a trash beside the parent,
 * {@code confine-scratch-<pid>-trash-<random>}, where no child can reach it. One shutdown hook
 * removes every runner's parent and trash, whatever the execs left in them, when the JVM exits;
 * those of JVMs that were killed before they could are removed by the next JVM that builds a
 * confined runner.
 *
 * <p>What protects what. Landlock lets confined children write (create, remove, rename, link) only
 * beneath their writable paths, and the parent is one of them: while any child of the runner runs,
 * any name in the parent or beneath it may be replaced at any moment, by a link, a fifo, another
 * directory. The temporary directory that holds the parent and the trash is not one of them (unless
 * the root or a writable path contains it), so no child can rename or replace the parent or the
 * trash, nor write anything beneath the trash. That is Landlock's doing, not the sticky bit of
 * {@code /tmp}: without {@code runAs} the children run as this JVM's user, the parent's owner, whom
 * the sticky bit lets rename it; it only keeps other users (a {@code runAs} child among them) from
 * renaming what this user owns there. Other local users are kept out by the modes: the parent is
 * 0700, or 0711 with an owner (traversable, not listable), and each exec's directory 0700.
 *
 * <p>So the JVM, unconfined, never opens a name in the parent, and never follows one: there it only
 * reads attributes (fstatat), renames (renameat) and unlinks. An exec's directory, once its exec is
 * over, is moved into the trash whole, and only there, where Landlock keeps it still even for a
 * child whose working directory is inside it, is it opened, listed and emptied (see {@link Trash}).
 * The directory itself is held open from its making to its removal, so that its mode is set without
 * naming it.
 */
final class ScratchDirectories {
  private static final String PREFIX = "confine-scratch-";
  private static final Pattern NAME = Pattern.compile(Pattern.quote(PREFIX) + "(\\d+)-.*");
  private static final long JVM_PID = ProcessHandle.current().pid();
  private static final AtomicBoolean STALE_REMOVED = new AtomicBoolean();
  // Every runner's, for the one shutdown hook (a runner lives as long as the JVM).
  private static final Queue<ScratchDirectories> AT_EXIT = new ConcurrentLinkedQueue<>();
  private static final AtomicBoolean HOOKED = new AtomicBoolean();
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rwx------");
  private static final Set<PosixFilePermission> TRAVERSABLE =
      PosixFilePermissions.fromString("rwx--x--x");
  // Names taken in advance (a child can make exec-N in the parent) skipped before take gives up.
  private static final int NAME_ATTEMPTS = 64;

  private final Path parent;
  private final SecureDirectoryStream<Path> parentDir;
  private final Trash trash;
  private final Credentials.User owner; // null: this JVM's user
  private final AtomicLong created = new AtomicLong();
  private final ConcurrentLinkedDeque<Exec> idle = new ConcurrentLinkedDeque<>();
  private final Map<Path, Exec> taken = new ConcurrentHashMap<>();

  /**
   * An exec's directory: where it is, its name in the parent, the directory itself (held open from
   * its making to its removal, so that its mode is set without naming it) and its file key (to know
   * it by).
   */
  private record Exec(Path path, Path name, SecureDirectoryStream<Path> dir, Object key) {}

  private ScratchDirectories(
      Path parent, SecureDirectoryStream<Path> parentDir, Trash trash, Credentials.User owner) {
    this.parent = parent;
    this.parentDir = parentDir;
    this.trash = trash;
    this.owner = owner;
  }

  /**
   * A new parent, removed when the JVM exits; first (once per JVM) the parents of JVMs that are no
   * longer running. With an {@code owner}, the parent can be traversed (not listed) by others and
   * each exec's directory belongs to that user.
   *
   * @throws SandboxException INTERNAL when the parent cannot be created
   */
  static ScratchDirectories create(Credentials.User owner) {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    if (STALE_REMOVED.compareAndSet(false, true)) {
      removeStale(tmp);
    }
    Path parent = null;
    Trash trash = null;
    try {
      parent = Files.createTempDirectory(tmp, PREFIX + JVM_PID + "-").toRealPath();
      Files.setPosixFilePermissions(parent, owner == null ? OWNER_ONLY : TRAVERSABLE);
      // Beside the parent, on its filesystem: what is moved there stays the same inodes.
      trash = Trash.create(parent.getParent());
      ScratchDirectories s = new ScratchDirectories(parent, open(parent), trash, owner);
      removedAtExit(s);
      return s;
    } catch (IOException | UnsupportedOperationException e) {
      if (trash != null) {
        trash.close();
      }
      if (parent != null) {
        try {
          Files.deleteIfExists(parent);
        } catch (IOException x) {
          e.addSuppressed(x);
        }
      }
      throw SandboxException.of(Kind.INTERNAL, "cannot create the scratch directory: " + e, e);
    }
  }

  /** The directory holding every exec's TMPDIR. */
  Path parent() {
    return parent;
  }

  /**
   * An empty scratch directory for one exec: an idle one of an earlier exec, else a new one. Reuse
   * saves a mkdir and an rmdir per exec (about 0.25 ms on an ext4 /tmp mounted with discard).
   *
   * @throws SandboxException INTERNAL when a new one cannot be made
   */
  Path take(String cmd) {
    Exec e = idle.pollFirst();
    if (e == null) {
      try {
        e = make();
      } catch (IOException | RuntimeException x) {
        throw SandboxException.of(
            Kind.INTERNAL, "exec " + cmd + ": scratch directory in " + parent + ": " + x, x);
      }
    }
    taken.put(e.path(), e);
    return e.path();
  }

  /**
   * A new exec directory. It is made in the trash, where no child can reach it, with mode 0700
   * whatever the umask and, with an owner, that user's; then renamed into the parent, under the
   * next name {@code exec-N} that no child took in advance (an empty directory there is replaced).
   */
  private Exec make() throws IOException {
    Path made = trash.fresh();
    Path inTrash = trash.path.resolve(made);
    Files.createDirectory(inTrash, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
    SecureDirectoryStream<Path> dir = null;
    try {
      // By path: in the trash nothing but this JVM changes a name. The umask took bits off the
      // mkdir's mode (never more than 0700): 0700 exactly, whatever it is.
      Files.setPosixFilePermissions(inTrash, OWNER_ONLY);
      if (owner != null) {
        Files.setAttribute(inTrash, "unix:gid", owner.gid(), NOFOLLOW_LINKS);
        Files.setAttribute(inTrash, "unix:uid", owner.uid(), NOFOLLOW_LINKS);
      }
      dir = trash.dir.newDirectoryStream(made, NOFOLLOW_LINKS);
      Object key =
          dir.getFileAttributeView(BasicFileAttributeView.class).readAttributes().fileKey();
      for (int i = 0; ; i++) {
        Path name = Path.of("exec-" + created.incrementAndGet());
        try {
          trash.dir.move(made, parentDir, name);
          return new Exec(parent.resolve(name), name, dir, key);
        } catch (NoSuchFileException x) {
          throw x; // the parent is gone
        } catch (IOException x) {
          if (i == NAME_ATTEMPTS) {
            throw x;
          }
        }
      }
    } catch (IOException | RuntimeException x) {
      if (dir != null) {
        close(dir);
      }
      trash.remove(made);
      throw x;
    }
  }

  /**
   * Hands back {@code tmp} once its exec is over. With {@code reusable} (nothing the exec started
   * can be running: its tree was held from its start and is gone) it is emptied and kept for a
   * later exec, with mode 0700 again; otherwise (a process that left the tree unseen could still
   * write into it, as the process group or the sampler cannot rule out) it is emptied and removed,
   * and the next exec gets a new one. A directory that cannot be emptied, or is not the one {@code
   * take} made (a child can replace it), is not reused. The common case, an exec that left nothing,
   * costs one fstatat, one open and one getdents64.
   *
   * <p>Anything else is emptied in the trash: what is at its name is moved there whole (a rename,
   * which neither opens nor follows what it moves), out of every child's reach, and only there is
   * it listed and its tree removed; reused, it is moved back.
   */
  void giveBack(Path tmp, boolean reusable) {
    Exec e = taken.remove(tmp);
    if (e == null) {
      return; // not one of ours, or given back already
    }
    if (emptied(e, reusable)) {
      idle.addFirst(e);
    } else {
      close(e.dir());
    }
  }

  /** Empties {@code e}; whether it is back in the parent, empty, for a later exec. */
  private boolean emptied(Exec e, boolean reusable) {
    PosixFileAttributes a = attributes(parentDir, e.name());
    if (a == null) {
      return false; // the exec removed it
    }
    boolean ours = a.isDirectory() && e.key().equals(a.fileKey());
    if (ours && !a.permissions().equals(OWNER_ONLY)) {
      // The exec may have opened it to others, or made it read-only: a directory changes parent
      // only if it is writable. Through the open directory, not its name, which a child can change.
      try {
        e.dir().getFileAttributeView(PosixFileAttributeView.class).setPermissions(OWNER_ONLY);
      } catch (IOException x) {
        return false;
      }
    }
    if (ours && Directories.isEmpty(e.path())) { // opens no fifo and follows no link
      if (reusable) {
        return true;
      }
      try {
        parentDir.deleteDirectory(e.name());
        return false;
      } catch (IOException x) {
        // written to again since: emptied in the trash
      }
    }
    Path moved = trash.takeFrom(parentDir, e.name()); // a link or file in its place too
    if (moved == null) {
      return false; // gone, or cannot be moved: left for the JVM's exit
    }
    PosixFileAttributes m = attributes(trash.dir, moved);
    if (reusable && m != null && e.key().equals(m.fileKey()) && trash.empty(moved)) {
      try {
        trash.dir.move(moved, parentDir, e.name());
        return true;
      } catch (IOException x) {
        // the name was taken again meanwhile: removed instead, the name not reused
      }
    }
    trash.remove(moved);
    return false;
  }

  /**
   * Registers {@code s} with the one shutdown hook, which removes every runner's directories (not
   * one File.deleteOnExit per directory: that list only grows, and cannot remove a tree).
   */
  private static void removedAtExit(ScratchDirectories s) {
    AT_EXIT.add(s);
    if (HOOKED.compareAndSet(false, true)) {
      try {
        Runtime.getRuntime()
            .addShutdownHook(
                new Thread(
                    () -> {
                      for (ScratchDirectories d; (d = AT_EXIT.poll()) != null; ) {
                        d.remove();
                      }
                    },
                    "confine-scratch-removal"));
      } catch (IllegalStateException e) {
        // the JVM is exiting already: left for the next JVM
      }
    }
  }

  /**
   * Removes the parent, whatever the execs left in it (children may still be running and writing
   * there), and the trash. Each exec's directory is set to 0700 through its descriptor so that it
   * can be moved; everything in the parent is moved into the trash and removed there.
   */
  private void remove() {
    List<Exec> held = new ArrayList<>(taken.values());
    held.addAll(idle);
    for (Exec e : held) {
      try {
        e.dir().getFileAttributeView(PosixFileAttributeView.class).setPermissions(OWNER_ONLY);
      } catch (IOException | RuntimeException x) {
        // removed anyway if it can be
      }
    }
    try (SecureDirectoryStream<Path> p = open(parent)) {
      trash.evacuate(p);
    } catch (IOException | RuntimeException x) {
      // what is left goes with the next JVM
    }
    try {
      Files.deleteIfExists(parent);
    } catch (IOException x) {
      // written to again since, or something could not be moved out: for the next JVM
    }
    trash.removeContentsAndItself();
  }

  private static SecureDirectoryStream<Path> open(Path dir) throws IOException {
    DirectoryStream<Path> d = Files.newDirectoryStream(dir);
    if (d instanceof SecureDirectoryStream<Path> s) {
      return s;
    }
    d.close();
    throw new UnsupportedOperationException("no openat on this platform: " + dir);
  }

  /**
   * The attributes of {@code name} in {@code dir}, not following a link; null when there is none.
   */
  private static PosixFileAttributes attributes(SecureDirectoryStream<Path> dir, Path name) {
    try { // fstatat(AT_SYMLINK_NOFOLLOW): opens nothing
      return dir.getFileAttributeView(name, PosixFileAttributeView.class, NOFOLLOW_LINKS)
          .readAttributes();
    } catch (IOException e) {
      return null;
    }
  }

  private static void close(DirectoryStream<Path> dir) {
    try {
      dir.close();
    } catch (IOException e) {
      // nothing more to do with it
    }
  }

  /**
   * The pid in a scratch parent's name; empty when the name is not one, or its digits do not make a
   * long (anyone can create such a name in the temporary directory: it is skipped, not the end of
   * the cleanup).
   */
  private static OptionalLong pidOf(String name) {
    Matcher m = NAME.matcher(name);
    if (!m.matches()) {
      return OptionalLong.empty();
    }
    try {
      return OptionalLong.of(Long.parseLong(m.group(1)));
    } catch (NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * Removes the scratch parents and trashes in {@code tmp} whose JVM is no longer running (the pid
   * in the name; a pid that was reused by another process keeps its directory, which is only a
   * missed cleanup), however deep and read-only their trees. Only this JVM's user's are removed:
   * another user's, which that user could be changing while they are removed, are left.
   */
  static void removeStale(Path tmp) {
    List<Path> stale = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(tmp, PREFIX + "*")) {
      for (Path p : entries) {
        OptionalLong pid = pidOf(p.getFileName().toString());
        if (pid.isPresent()
            && pid.getAsLong() != JVM_PID
            && ProcessHandle.of(pid.getAsLong()).isEmpty()) {
          stale.add(p.getFileName());
        }
      }
    } catch (IOException | DirectoryIteratorException e) {
      return; // nothing to clean that can be seen
    }
    if (stale.isEmpty()) {
      return;
    }
    Trash trash;
    try {
      trash = Trash.create(tmp);
    } catch (IOException | UnsupportedOperationException e) {
      return; // left for a later start
    }
    try (SecureDirectoryStream<Path> dir = open(tmp)) {
      for (Path name : stale) {
        trash.removeStale(dir, name);
      }
    } catch (IOException | UnsupportedOperationException e) {
      // left for a later start
    } finally {
      trash.close();
    }
  }

  /**
   * A directory of this JVM's, {@code confine-scratch-<pid>-trash-<random>} beside the parents,
   * where what confined children left is emptied and removed. No child can write there: Landlock
   * checks a write against where its target is now, and the trash is neither a writable path nor
   * beneath one, so a tree moved in from the parent holds still, even for a child whose working
   * directory is inside it. So only here are directories opened (never a name a child could still
   * change: it could have become a fifo, whose open would block, or a link), listed, made writable
   * where this JVM's user owns them and removed, fd-relative, following no link. A directory's
   * directories are moved up into the trash and removed from there, so a tree of any depth is
   * removed holding two directories open.
   */
  private static final class Trash {
    private static final Set<PosixFilePermission> OWNER_RWX =
        EnumSet.of(
            PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE,
            PosixFilePermission.OWNER_EXECUTE);

    final Path path;
    final SecureDirectoryStream<Path> dir;
    private final UserPrincipal self; // this JVM's user, the trash's owner
    private final boolean root; // needs no permission to read, write or search a directory
    private final AtomicLong names = new AtomicLong();

    private Trash(Path path, SecureDirectoryStream<Path> dir, UserPrincipal self, boolean root) {
      this.path = path;
      this.dir = dir;
      this.self = self;
      this.root = root;
    }

    static Trash create(Path tmp) throws IOException {
      Path path = Files.createTempDirectory(tmp, PREFIX + JVM_PID + "-trash-");
      SecureDirectoryStream<Path> dir = null;
      try {
        Files.setPosixFilePermissions(path, OWNER_ONLY);
        dir = open(path);
        PosixFileAttributes a =
            dir.getFileAttributeView(PosixFileAttributeView.class).readAttributes();
        int uid = (Integer) Files.getAttribute(path, "unix:uid", NOFOLLOW_LINKS);
        return new Trash(path, dir, a.owner(), uid == 0);
      } catch (IOException | RuntimeException e) {
        if (dir != null) {
          ScratchDirectories.close(dir);
        }
        Files.deleteIfExists(path);
        throw e;
      }
    }

    /** A name no entry of the trash has had. */
    private Path fresh() {
      return Path.of("t" + names.incrementAndGet());
    }

    /**
     * Moves {@code name} out of {@code from}, a directory children may write in, into the trash,
     * whatever it is now (renameat opens and follows nothing); its name here, or null when there
     * was nothing there or it cannot be moved (a directory changes parent only if it is writable).
     */
    Path takeFrom(SecureDirectoryStream<Path> from, Path name) {
      Path moved = fresh();
      try {
        from.move(name, dir, moved);
        return moved;
      } catch (IOException e) {
        return null;
      }
    }

    /**
     * Empties {@code name}, a directory of the trash, and says whether it is an empty directory now
     * (what it held that cannot be removed stays in the trash, for the JVM's exit).
     */
    boolean empty(Path name) {
      PosixFileAttributes a = attributes(dir, name);
      if (a == null || !a.isDirectory()) {
        return false;
      }
      Deque<Path> work = new ArrayDeque<>();
      boolean empty = drain(name, a, work);
      removeAll(work);
      return empty;
    }

    /** Removes {@code name} from the trash, whatever it is; whether all of it went. */
    boolean remove(Path name) {
      Deque<Path> work = new ArrayDeque<>();
      work.push(name);
      return removeAll(work);
    }

    private boolean removeAll(Deque<Path> work) {
      boolean all = true;
      while (!work.isEmpty()) {
        Path name = work.pop();
        PosixFileAttributes a = attributes(dir, name);
        if (a == null) {
          continue;
        }
        try {
          if (!a.isDirectory()) {
            dir.deleteFile(name);
          } else if (drain(name, a, work)) {
            dir.deleteDirectory(name);
          } else {
            all = false;
          }
        } catch (IOException e) {
          all = false;
        }
      }
      return all;
    }

    /**
     * Unlinks what directory {@code name} of the trash holds and moves the directories among it up
     * into the trash (onto {@code work}, to be removed in turn); whether it is empty now.
     */
    private boolean drain(Path name, PosixFileAttributes a, Deque<Path> work) {
      makeUsable(dir, name, a);
      List<Path> entries = new ArrayList<>();
      try (SecureDirectoryStream<Path> d = dir.newDirectoryStream(name, NOFOLLOW_LINKS)) {
        for (Path e : d) {
          entries.add(e.getFileName());
        }
        boolean empty = true;
        for (Path e : entries) {
          PosixFileAttributes ea = attributes(d, e);
          if (ea == null) {
            continue;
          }
          try {
            if (ea.isDirectory()) {
              makeUsable(d, e, ea); // its ".." changes: it must be writable
              Path up = fresh();
              d.move(e, dir, up);
              work.push(up);
            } else {
              d.deleteFile(e); // a file, link, fifo or socket: unlinked, never opened
            }
          } catch (IOException x) {
            empty = false;
          }
        }
        return empty;
      } catch (IOException | DirectoryIteratorException e) {
        return false;
      }
    }

    /**
     * Gives this JVM's user read, write and search permission on directory {@code name} of {@code
     * in} where it owns it and lacks one (a read-only tree, as a Go module cache is, or one an exec
     * locked), so that it can be listed and emptied; root needs none. {@code in} is the trash or a
     * directory of it (or, for a stale parent, the temporary directory, where only this user and
     * root can rename what this user owns, and no child can write), so the name is still the
     * directory {@code a} describes: the chmod goes through an open of it that follows no link, or,
     * where it cannot be opened (not readable), by name once it is checked to be that directory
     * still.
     */
    private void makeUsable(SecureDirectoryStream<Path> in, Path name, PosixFileAttributes a) {
      Set<PosixFilePermission> mode = a.permissions();
      if (root || mode.containsAll(OWNER_RWX) || !self.equals(a.owner())) {
        return;
      }
      Set<PosixFilePermission> usable = EnumSet.copyOf(OWNER_RWX);
      usable.addAll(mode);
      try {
        in.getFileAttributeView(name, PosixFileAttributeView.class, NOFOLLOW_LINKS)
            .setPermissions(usable);
        return;
      } catch (IOException e) {
        // not readable: cannot be opened to be changed
      }
      PosixFileAttributes again = attributes(in, name);
      if (again != null && again.isDirectory() && again.fileKey().equals(a.fileKey())) {
        try {
          in.getFileAttributeView(name, PosixFileAttributeView.class).setPermissions(usable);
        } catch (IOException e) {
          // left as it is: what it holds stays
        }
      }
    }

    /**
     * Removes {@code name} of {@code tmp}, a stale parent or trash (or whatever has that name), if
     * it is this JVM's user's. A dead JVM's children may still be running and writing into its
     * parent: what it holds is moved into this trash first, out of their reach, and removed there.
     */
    void removeStale(SecureDirectoryStream<Path> tmp, Path name) {
      PosixFileAttributes a = attributes(tmp, name);
      if (a == null || !self.equals(a.owner())) {
        return;
      }
      try {
        if (!a.isDirectory()) {
          tmp.deleteFile(name); // a link or file with that name
          return;
        }
        // Only this JVM's user or root can rename what this user owns in the temporary directory
        // (sticky), and no confined child can write there: the name stays that directory.
        makeUsable(tmp, name, a);
        try (SecureDirectoryStream<Path> stale = tmp.newDirectoryStream(name, NOFOLLOW_LINKS)) {
          evacuate(stale);
        }
        tmp.deleteDirectory(name);
      } catch (IOException | DirectoryIteratorException e) {
        // left for a later start
      }
    }

    /**
     * Moves what {@code live} holds (children may still be writing in it) into the trash and
     * removes it there.
     */
    void evacuate(SecureDirectoryStream<Path> live) {
      List<Path> entries = new ArrayList<>();
      try {
        for (Path e : live) {
          entries.add(e.getFileName());
        }
      } catch (DirectoryIteratorException e) {
        // what was listed
      }
      for (Path e : entries) {
        Path moved = takeFrom(live, e);
        if (moved != null) {
          remove(moved);
        }
      }
    }

    /** Removes what is in the trash, then closes and removes it (if it could be emptied). */
    void close() {
      removeContentsAndItself();
      ScratchDirectories.close(dir);
    }

    /**
     * Removes what is left in the trash (what could not be removed before: a later try may do it)
     * and then the trash, if it is empty now; else the next JVM does. It stays open: at exit,
     * threads still giving directories back get errors from it, not a closed stream.
     */
    void removeContentsAndItself() {
      List<Path> left = new ArrayList<>();
      try (SecureDirectoryStream<Path> d = open(path)) {
        for (Path e : d) {
          left.add(e.getFileName());
        }
      } catch (IOException | DirectoryIteratorException | UnsupportedOperationException e) {
        // what was listed
      }
      for (Path name : left) {
        remove(name);
      }
      try {
        Files.deleteIfExists(path);
      } catch (IOException e) {
        // left for a later start
      }
    }
  }
}
