package dev.confine.host;

import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Finding a program the JVM itself will start or name (a backend's wrapper binary, a helper the
 * children's environment points at), as Go's {@code exec.LookPath} finds one: in the first absolute
 * directory of a search path that holds it as an executable regular file. Empty and relative
 * entries are skipped, so a program is never found through the working directory (Go refuses such a
 * result too, with {@code exec.ErrDot}). A child's own command is looked up by the engine instead,
 * beneath its open work directory.
 */
public final class ProgramLookup {
  private ProgramLookup() {}

  /** {@code name} in the first absolute directory of {@code searchPath} (null: none) holding it. */
  public static Optional<Path> onPath(String name, String searchPath) {
    if (searchPath == null) {
      return Optional.empty();
    }
    for (String dir : searchPath.split(":", -1)) {
      if (dir.isEmpty() || !dir.startsWith("/")) {
        continue;
      }
      Path candidate;
      try {
        candidate = Path.of(dir, name);
      } catch (InvalidPathException e) {
        continue;
      }
      if (whyNotExecutable(candidate) == null) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  /**
   * Why {@code path} cannot be executed by this process (its real user, as {@code access(X_OK)}),
   * or null when it can: it does not exist, is a directory or another non-regular file, or lacks
   * the permission.
   */
  public static String whyNotExecutable(Path path) {
    if (!Files.exists(path)) {
      return "no such file or directory";
    }
    if (Files.isDirectory(path)) {
      return "is a directory";
    }
    if (!Files.isRegularFile(path)) {
      return "not a regular file";
    }
    if (!Files.isExecutable(path)) {
      return "permission denied";
    }
    return null;
  }
}
