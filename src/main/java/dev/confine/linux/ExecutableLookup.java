package dev.confine.linux;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds the program to run before spawning, so that "not found" and "not executable" are told apart
 * exactly (posix_spawn reports a missing program and a failed chdir with the same ENOENT).
 */
public final class ExecutableLookup {
  private ExecutableLookup() {}

  /** The outcome of a lookup. */
  public sealed interface Result {}

  /**
   * Found.
   *
   * @param path the path to hand to posix_spawn
   */
  public record Found(String path) implements Result {}

  /**
   * Nothing to run at that name.
   *
   * @param reason what was looked at
   */
  public record NotFound(String reason) implements Result {}

  /**
   * There is a file, but it cannot be run.
   *
   * @param reason why
   */
  public record NotExecutable(String reason) implements Result {}

  /**
   * Looks up {@code command}: a name with a slash is taken as a path (relative ones beneath {@code
   * workDir}, where the child will run); a bare name is searched in {@code searchPath} (the
   * parent's PATH; empty and relative entries are skipped, so a bare name never runs from the
   * current directory).
   */
  public static Result find(String command, Path workDir, String searchPath) {
    if (command.indexOf('/') >= 0) {
      Path p = workDir.resolve(command);
      if (!Files.exists(p)) {
        return new NotFound("no such file");
      }
      if (Files.isDirectory(p)) {
        return new NotExecutable("is a directory");
      }
      if (!Files.isExecutable(p)) {
        return new NotExecutable("permission denied");
      }
      return new Found(command);
    }
    if (searchPath != null) {
      for (String dir : searchPath.split(":")) {
        if (dir.isEmpty() || !dir.startsWith("/")) {
          continue;
        }
        Path p = Path.of(dir, command);
        if (Files.isRegularFile(p) && Files.isExecutable(p)) {
          return new Found(p.toString());
        }
      }
    }
    return new NotFound("executable file not found in $PATH");
  }
}
