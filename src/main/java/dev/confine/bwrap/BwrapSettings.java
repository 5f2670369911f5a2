package dev.confine.bwrap;

import dev.confine.RootedPaths;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.host.GoQuote;
import dev.confine.host.HostExec;
import dev.confine.host.ProgramLookup;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a bubblewrap runner is built from, checked and resolved once as the seed's {@code New} does
 * (§10.1 steps 1 to 5, in that order, so the same error wins): the extra flags, the binary, the
 * root, the writable paths, the default capture cap.
 *
 * @param binary the bwrap binary: absolute, as found on the PATH or as given (not symlink-resolved)
 * @param root the root: absolute, and symlink-resolved when it exists ({@link
 *     RootedPaths#resolveRoot})
 * @param writablePaths the writable paths beyond the root: absolute, symlink-resolved, existing,
 *     each once, in the order given, without the root
 * @param extraFlags the extra flags, checked against {@link BwrapFlags#REJECTED_EXTRA_FLAGS}, to go
 *     first on every command line
 * @param defaultMaxOutputBytes the capture cap per stream of a call that sets none (10 MiB)
 */
record BwrapSettings(
    Path binary,
    Path root,
    List<String> writablePaths,
    List<String> extraFlags,
    long defaultMaxOutputBytes) {

  /** The program looked up on the PATH when no binary is given. */
  static final String DEFAULT_BINARY = "bwrap";

  /**
   * How the message for a missing bwrap names the way to give one: the seed says {@code
   * WithBinary}; the Java runner's builder is expected to have {@code binary(path)}.
   */
  static final String BINARY_OPTION = "binary(path)";

  /** The capture cap per stream when a call sets none: the seed's 10 MiB, as the other runners. */
  static final long DEFAULT_MAX_OUTPUT_BYTES = HostExec.DEFAULT_MAX_OUTPUT_BYTES;

  /** Copies the lists. */
  BwrapSettings {
    writablePaths = List.copyOf(writablePaths);
    extraFlags = List.copyOf(extraFlags);
  }

  /** As {@link #resolve(String, String, List, List, String)} with this process's PATH. */
  static BwrapSettings resolve(
      String rootDir, String binary, List<String> writablePaths, List<String> extraFlags) {
    return resolve(rootDir, binary, writablePaths, extraFlags, System.getenv("PATH"));
  }

  /**
   * Checks and resolves, in the seed's order:
   *
   * <ol>
   *   <li>the extra flags ({@link BwrapFlags#validateExtraFlags}): VALIDATION for the first that
   *       can weaken the sandbox;
   *   <li>the binary: none given (null or empty), {@code bwrap} looked up on {@code searchPath}
   *       (NOT_AVAILABLE {@code bwrap: binary not found on PATH; install bubblewrap or use
   *       binary(path)}); given, it must be an executable file (NOT_AVAILABLE {@code bwrap: binary
   *       "P" not executable: why}). As Go's {@code exec.LookPath}, which the seed uses for both, a
   *       given name without a {@code /} is looked up on the PATH too, and a given relative path is
   *       taken from the working directory (made absolute and normalised here);
   *   <li>the root: absolute, then symlink-resolved when it exists ({@link
   *       RootedPaths#resolveRoot}); VALIDATION when it cannot be named as a path;
   *   <li>each writable path: absolute, symlink-resolved, and it must exist (VALIDATION {@code
   *       bwrap: writable path "P" must exist: why}); one that resolves to the root or to a path
   *       already kept is dropped, the order of the rest kept;
   *   <li>the default capture cap, 10 MiB.
   * </ol>
   *
   * <p>Stricter than the seed, where Go would silently take the working directory (its {@code
   * filepath.Abs("")}): an empty or null root is VALIDATION {@code bwrap: runner root must be set},
   * and an empty or null writable path VALIDATION {@code bwrap: empty writable path}, as for the
   * other runners. Also unlike Go's lookup, an empty or relative PATH entry is never searched: a
   * bwrap found through the working directory is refused (Go 1.19+ refuses it too, with {@code
   * exec.ErrDot}, as the seed's error).
   *
   * @param rootDir the runner's root
   * @param binary the bwrap binary, or null (or empty) to look {@code bwrap} up on the PATH
   * @param writablePaths paths beyond the root the children may write
   * @param extraFlags flags to pass to bwrap first
   * @param searchPath the PATH to look the binary up on (null: none)
   * @throws SandboxException VALIDATION or NOT_AVAILABLE as listed
   */
  static BwrapSettings resolve(
      String rootDir,
      String binary,
      List<String> writablePaths,
      List<String> extraFlags,
      String searchPath) {
    List<String> extra = extraFlags == null ? List.of() : extraFlags;
    for (int i = 0; i < extra.size(); i++) {
      if (extra.get(i) == null) {
        throw SandboxException.of(Kind.VALIDATION, "bwrap: extra flag " + i + " is null");
      }
    }
    BwrapFlags.validateExtraFlags(extra);
    Path resolvedBinary = binary(binary, searchPath);
    Path root = root(rootDir);
    List<String> writable = writable(root, writablePaths == null ? List.of() : writablePaths);
    return new BwrapSettings(resolvedBinary, root, writable, extra, DEFAULT_MAX_OUTPUT_BYTES);
  }

  private static Path binary(String binary, String searchPath) {
    if (binary == null || binary.isEmpty()) {
      return ProgramLookup.onPath(DEFAULT_BINARY, searchPath)
          .orElseThrow(
              () ->
                  SandboxException.of(
                      Kind.NOT_AVAILABLE,
                      "bwrap: binary not found on PATH; install bubblewrap or use "
                          + BINARY_OPTION));
    }
    if (binary.indexOf('/') < 0) {
      return ProgramLookup.onPath(binary, searchPath)
          .orElseThrow(() -> notExecutable(binary, "not found on PATH"));
    }
    Path path;
    try {
      path = Path.of(binary).toAbsolutePath().normalize();
    } catch (InvalidPathException e) {
      throw notExecutable(binary, "cannot be named as a Java path here: " + e.getMessage());
    }
    String why = ProgramLookup.whyNotExecutable(path);
    if (why != null) {
      throw notExecutable(binary, why);
    }
    return path;
  }

  private static SandboxException notExecutable(String binary, String why) {
    return SandboxException.of(
        Kind.NOT_AVAILABLE, "bwrap: binary " + GoQuote.of(binary) + " not executable: " + why);
  }

  private static Path root(String rootDir) {
    if (rootDir == null || rootDir.isEmpty()) {
      throw SandboxException.of(Kind.VALIDATION, "bwrap: runner root must be set");
    }
    try {
      return RootedPaths.resolveRoot(rootDir);
    } catch (InvalidPathException e) {
      throw SandboxException.of(Kind.VALIDATION, "bwrap: resolve rootDir: " + e.getMessage(), e);
    }
  }

  private static List<String> writable(Path root, List<String> paths) {
    Set<String> seen = new HashSet<>();
    seen.add(root.toString());
    List<String> out = new ArrayList<>();
    for (String p : paths) {
      if (p == null || p.isEmpty()) {
        throw SandboxException.of(Kind.VALIDATION, "bwrap: empty writable path");
      }
      Path real;
      try {
        real = Path.of(p).toAbsolutePath().normalize().toRealPath();
      } catch (InvalidPathException e) {
        throw SandboxException.of(
            Kind.VALIDATION,
            "bwrap: resolve writable path " + GoQuote.of(p) + ": " + e.getMessage(),
            e);
      } catch (IOException e) {
        throw SandboxException.of(
            Kind.VALIDATION, "bwrap: writable path " + GoQuote.of(p) + " must exist: " + why(e), e);
      }
      if (seen.add(real.toString())) {
        out.add(real.toString());
      }
    }
    return out;
  }

  /** An I/O failure as a few words, as Go's errno texts read. */
  private static String why(IOException e) {
    if (e instanceof NoSuchFileException) {
      return "no such file or directory";
    }
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof FileSystemException fse && fse.getReason() != null) {
      return fse.getReason();
    }
    return String.valueOf(e.getMessage());
  }
}
