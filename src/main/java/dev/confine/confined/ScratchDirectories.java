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
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The private TMPDIRs of one confined runner's execs and sessions: directories {@code exec-N} in a
 * parent {@code confine-scratch-<pid>-<random>} under the system's temporary directory, one per
 * exec in flight, emptied after their exec and reused. The parent goes when the JVM exits; the
 * parents of JVMs that were killed before they could remove theirs are removed by the next JVM that
 * builds a confined runner.
 */
final class ScratchDirectories {
  private static final String PREFIX = "confine-scratch-";
  private static final Pattern NAME = Pattern.compile(Pattern.quote(PREFIX) + "(\\d+)-.*");
  private static final long JVM_PID = ProcessHandle.current().pid();
  private static final AtomicBoolean STALE_REMOVED = new AtomicBoolean();
  // Deeper trees are left (and the directory not reused): each level holds an open directory.
  private static final int MAX_DEPTH = 64;

  private final Path parent;
  private final Credentials.User owner; // null: this JVM's user
  private final AtomicLong created = new AtomicLong();
  private final ConcurrentLinkedDeque<Path> idle = new ConcurrentLinkedDeque<>();

  private ScratchDirectories(Path parent, Credentials.User owner) {
    this.parent = parent;
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
    try {
      Path parent = Files.createTempDirectory(tmp, PREFIX + JVM_PID + "-").toRealPath();
      parent.toFile().deleteOnExit();
      if (owner != null) {
        Files.setPosixFilePermissions(parent, PosixFilePermissions.fromString("rwx--x--x"));
      }
      return new ScratchDirectories(parent, owner);
    } catch (IOException | UnsupportedOperationException e) {
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
    Path tmp = idle.pollFirst();
    if (tmp != null) {
      return tmp;
    }
    tmp = parent.resolve("exec-" + created.incrementAndGet());
    try {
      Files.createDirectory(tmp);
      if (owner != null) {
        Files.setAttribute(tmp, "unix:gid", owner.gid(), NOFOLLOW_LINKS);
        Files.setAttribute(tmp, "unix:uid", owner.uid(), NOFOLLOW_LINKS);
      }
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      throw SandboxException.of(
          Kind.INTERNAL, "exec " + cmd + ": scratch directory " + tmp + ": " + e, e);
    }
    tmp.toFile().deleteOnExit(); // runs before the parent's, registered earlier
    return tmp;
  }

  /**
   * Hands back {@code tmp} once its exec is over. With {@code reusable} (nothing the exec started
   * can be running: its tree was held from its start and is gone) it is emptied and kept for a
   * later exec; otherwise (a process that left the tree unseen could still write into it, as the
   * process group or the sampler cannot rule out) it is emptied and removed, and the next exec gets
   * a new one. A directory that cannot be emptied is not reused. The common case, an exec that left
   * nothing, costs one open and one getdents64.
   */
  void giveBack(Path tmp, boolean reusable) {
    boolean empty = Directories.isEmpty(tmp) || emptyWithoutFollowing(parent, tmp.getFileName());
    if (empty && reusable) {
      idle.addFirst(tmp);
    } else if (empty) {
      try {
        Files.deleteIfExists(tmp); // a link in its place was removed by the emptying
      } catch (IOException e) {
        // written to again since: left for the JVM's exit
      }
    }
  }

  /**
   * Deletes what an exec left in {@code dir/name} and says whether it is an empty directory now.
   * Every step is relative to an open directory and follows no symbolic link: the scratch parent is
   * writable by confined children (it holds every exec's TMPDIR), so a child may have replaced the
   * directory or anything beneath it with a link to where this unconfined JVM must not delete. The
   * parent itself cannot be replaced (its own parent, the sticky temporary directory, lets only its
   * owner rename it).
   */
  private static boolean emptyWithoutFollowing(Path dir, Path name) {
    try (DirectoryStream<Path> parent = Files.newDirectoryStream(dir)) {
      if (!(parent instanceof SecureDirectoryStream<Path> sp)) {
        return false; // no openat on this platform: never reused, removed at exit
      }
      if (!isDirectory(sp, name)) {
        sp.deleteFile(name); // a link or file in its place: removed, the name not reused
        return false;
      }
      try (SecureDirectoryStream<Path> d = sp.newDirectoryStream(name, NOFOLLOW_LINKS)) {
        deleteContents(d, 0);
      }
      try (SecureDirectoryStream<Path> d = sp.newDirectoryStream(name, NOFOLLOW_LINKS)) {
        return !d.iterator().hasNext();
      }
    } catch (IOException | DirectoryIteratorException e) {
      return false;
    }
  }

  private static void deleteContents(SecureDirectoryStream<Path> dir, int depth) {
    List<Path> names = new ArrayList<>();
    for (Path entry : dir) {
      names.add(entry.getFileName());
    }
    for (Path n : names) {
      try {
        if (isDirectory(dir, n)) {
          if (depth >= MAX_DEPTH) {
            continue;
          }
          try (SecureDirectoryStream<Path> sub = dir.newDirectoryStream(n, NOFOLLOW_LINKS)) {
            deleteContents(sub, depth + 1);
          }
          dir.deleteDirectory(n);
        } else {
          dir.deleteFile(n);
        }
      } catch (IOException | DirectoryIteratorException e) {
        // best effort: what is left keeps the directory from being reused
      }
    }
  }

  private static boolean isDirectory(SecureDirectoryStream<Path> dir, Path name)
      throws IOException {
    return dir.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW_LINKS)
        .readAttributes()
        .isDirectory();
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
   * Removes the scratch parents in {@code tmp} whose JVM is no longer running (the pid in the name;
   * a pid that was reused by another process keeps its directory, which is only a missed cleanup).
   * What cannot be removed (another user's) is left.
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
    for (Path name : stale) {
      if (emptyWithoutFollowing(tmp, name)) {
        try {
          Files.deleteIfExists(tmp.resolve(name));
        } catch (IOException e) {
          // left for a later start
        }
      }
    }
  }
}
