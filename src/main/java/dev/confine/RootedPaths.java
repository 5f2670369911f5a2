package dev.confine;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Path resolution beneath a runner's root, shared by every backend and by the {@link
 * ExecPredicate#workDirOutsideRoot(String)} predicate. Public so that a backend or a predicate of
 * your own decides containment exactly as Confine's do.
 *
 * <p>Containment is decided on the path with every existing symlink resolved (the kernel's view),
 * so a symlink inside the root that points outside escapes even when its target does not exist yet.
 */
public final class RootedPaths {
  private static final int MAX_SYMLINKS = 40;

  private RootedPaths() {}

  /**
   * The root a runner uses for {@code dir}: absolute, and symlink-resolved when it exists (a root
   * that does not exist stays as its absolute, normalised form).
   */
  public static Path resolveRoot(String dir) {
    Path abs = Path.of(dir).toAbsolutePath().normalize();
    try {
      return abs.toRealPath();
    } catch (IOException e) {
      return abs;
    }
  }

  /**
   * {@code path} (absolute) with symlinks resolved along its longest existing prefix and the rest
   * appended lexically, as the kernel would see it once the rest is created. Dangling symlinks are
   * followed through their target text; {@code ..} after a symlink refers to the target's parent.
   *
   * @throws IOException when a component cannot be examined (permission denied, say), a component
   *     after an existing non-directory follows (ENOTDIR), or symlinks loop
   */
  public static Path resolveExistingPrefix(Path path) throws IOException {
    if (!path.isAbsolute()) {
      throw new IllegalArgumentException("not absolute: " + path);
    }
    Deque<String> todo = new ArrayDeque<>();
    pushComponents(todo, path);
    Path current = path.getRoot();
    // Whether current (when it exists) is a directory: the JDK reports ENOTDIR as
    // NoSuchFileException, but a path through a regular file can never be created.
    boolean currentIsDir = true;
    boolean missing = false;
    int links = 0;
    while (!todo.isEmpty()) {
      String name = todo.pop();
      if (!missing && !currentIsDir) {
        throw new FileSystemException(current.resolve(name).toString(), null, "Not a directory");
      }
      if (name.equals(".")) {
        continue;
      }
      if (name.equals("..")) {
        current = current.getParent() == null ? current : current.getParent();
        continue;
      }
      Path next = current.resolve(name);
      if (missing) {
        current = next;
        continue;
      }
      BasicFileAttributes attrs;
      try {
        attrs = Files.readAttributes(next, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      } catch (NoSuchFileException e) {
        missing = true;
        current = next;
        continue;
      }
      if (attrs.isSymbolicLink()) {
        if (++links > MAX_SYMLINKS) {
          throw new IOException("too many levels of symbolic links: " + path);
        }
        Path target = Files.readSymbolicLink(next);
        pushComponents(todo, target);
        if (target.isAbsolute()) {
          current = target.getRoot();
        }
        continue;
      }
      current = next;
      currentIsDir = attrs.isDirectory();
    }
    return current;
  }

  private static void pushComponents(Deque<String> todo, Path p) {
    for (int i = p.getNameCount() - 1; i >= 0; i--) {
      todo.push(p.getName(i).toString());
    }
  }

  /**
   * The working directory for {@code workDir} beneath {@code root} (which {@link #resolveRoot}
   * produced): empty = the root; relative = joined onto the root; absolute = as given. The path is
   * normalised lexically, checked with its symlinks resolved, and returned unresolved (the child
   * runs in the path the caller named).
   *
   * @throws PathTraversalException when the resolved path is neither the root nor beneath it
   * @throws SandboxException INTERNAL when a component cannot be examined
   */
  public static Path resolveWorkDir(Path root, String workDir) {
    return checkWorkDir(root, workDir).path();
  }

  /**
   * A working directory found contained by {@link #checkWorkDir}.
   *
   * @param path the directory as the caller named it: absolute, normalised lexically
   * @param resolved the same directory with its symlinks resolved at the check: the root or a path
   *     beneath it, with no symlink, "." or ".." left in it (as far as it existed)
   */
  public record CheckedWorkDir(Path path, Path resolved) {}

  /**
   * As {@link #resolveWorkDir}, also giving the resolved path the decision was made on. A backend
   * that enters the directory later enters {@code resolved}, relative to the root and without
   * following a symlink out of it, so that a tree changed after the check cannot move the child
   * out.
   *
   * @throws PathTraversalException when the resolved path is neither the root nor beneath it
   * @throws SandboxException INTERNAL when a component cannot be examined
   * @throws java.nio.file.InvalidPathException when {@code workDir} is not a path java.nio can name
   *     (bytes that are not UTF-8, carried as {@link ByteStrings} escapes): a backend resolves such
   *     a work dir by its bytes instead
   */
  public static CheckedWorkDir checkWorkDir(Path root, String workDir) {
    if (workDir == null || workDir.isEmpty()) {
      return new CheckedWorkDir(root, root);
    }
    Path p = Path.of(workDir);
    Path lexical = (p.isAbsolute() ? p : root.resolve(p)).normalize();
    Path resolved;
    try {
      resolved = resolveExistingPrefix(lexical);
    } catch (IOException e) {
      throw SandboxException.of(
          SandboxException.Kind.INTERNAL, "resolve workdir: " + e.getMessage(), e);
    }
    if (!resolved.startsWith(root)) {
      throw new PathTraversalException(workDir, root.toString());
    }
    return new CheckedWorkDir(lexical, resolved);
  }
}
