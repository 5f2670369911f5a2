package dev.confine.linux.spawn;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Syscalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Finds the program to run before spawning, so that "not found" and "not executable" are told apart
 * exactly (posix_spawn reports a missing program and a failed chdir with the same ENOENT). Names
 * are {@link dev.confine.ByteStrings}, looked up by their exact bytes.
 */
public final class ExecutableLookup {
  private static final int X_OK = 1;

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
   * workDir}, the open directory the child will start in, so the lookup sees what the child will);
   * a bare name is searched in {@code searchPath} (the parent's PATH; empty and relative entries
   * are skipped, so a bare name never runs from the current directory).
   */
  public static Result find(String command, WorkDirectory workDir, String searchPath) {
    try (Arena a = Arena.ofConfined()) {
      if (command.indexOf('/') >= 0) {
        return classify(workDir.fd(), Spawner.cString(a, command), command);
      }
      if (searchPath != null) {
        for (String dir : searchPath.split(":")) {
          if (dir.isEmpty() || !dir.startsWith("/")) {
            continue;
          }
          String path = stripTrailingSlashes(dir) + "/" + command;
          MemorySegment cPath = Spawner.cString(a, path);
          int mode = Syscalls.fstatatMode(Syscalls.AT_FDCWD, cPath, 0);
          if (mode >= 0
              && (mode & Syscalls.S_IFMT) == Syscalls.S_IFREG
              && Syscalls.faccessat(Syscalls.AT_FDCWD, cPath, X_OK) == 0) {
            return new Found(path);
          }
        }
      }
      return new NotFound("executable file not found in $PATH");
    }
  }

  private static Result classify(int dirFd, MemorySegment cPath, String command) {
    int mode = Syscalls.fstatatMode(dirFd, cPath, 0);
    if (mode == -LibC.EACCES()) {
      return new NotExecutable("permission denied");
    }
    if (mode < 0) {
      return new NotFound("no such file");
    }
    if ((mode & Syscalls.S_IFMT) == Syscalls.S_IFDIR) {
      return new NotExecutable("is a directory");
    }
    if (Syscalls.faccessat(dirFd, cPath, X_OK) != 0) {
      return new NotExecutable("permission denied");
    }
    return new Found(command);
  }

  private static String stripTrailingSlashes(String dir) {
    int end = dir.length();
    while (end > 1 && dir.charAt(end - 1) == '/') {
      end--;
    }
    return end == 1 ? "" : dir.substring(0, end);
  }
}
