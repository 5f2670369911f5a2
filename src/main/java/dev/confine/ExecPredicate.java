package dev.confine;

import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Decides whether a request needs approval, and says why. Predicates are evaluated in order by
 * {@link Runners#withApproval}; the first that matches sends the request to the approver.
 */
@FunctionalInterface
public interface ExecPredicate {
  /**
   * The reason {@code request} needs approval, or empty when it does not.
   *
   * @param request an immutable view of the request
   */
  Optional<String> match(ExecRequest request);

  /**
   * Matches commands whose base name (the last path element) matches one of the shell-glob {@code
   * patterns} ({@code *}, {@code ?}, {@code [...]}, {@code \} escapes; whole-name match); the first
   * matching pattern gives the reason. {@code "rm"} matches {@code rm} and {@code /bin/rm} but not
   * {@code rmdir}; {@code "mkfs*"} matches {@code mkfs.ext4}. A malformed pattern never matches.
   */
  static ExecPredicate commandPatterns(String... patterns) {
    List<GlobPattern> globs = new ArrayList<>(patterns.length);
    for (String p : patterns) {
      globs.add(new GlobPattern(p));
    }
    return request -> {
      String base = baseName(request.command());
      for (GlobPattern g : globs) {
        if (g.matches(base)) {
          return Optional.of(
              "command " + Quote.of(base) + " matches sensitive pattern " + Quote.of(g.toString()));
        }
      }
      return Optional.empty();
    };
  }

  /** Matches the start of an interactive terminal session. */
  static ExecPredicate interactive() {
    return request ->
        request.tty() ? Optional.of("interactive TTY session start") : Optional.empty();
  }

  /** Matches any request for a network mode other than {@link NetMode#DEFAULT}. */
  static ExecPredicate netNonDefault() {
    return request -> {
      NetMode mode = request.options().net().mode();
      return mode == NetMode.DEFAULT
          ? Optional.empty()
          : Optional.of(
              "non-default network policy requested (mode " + mode + " = " + mode.code() + ")");
    };
  }

  /**
   * Matches an absolute working directory that resolves (symlinks of its longest existing prefix
   * included) outside {@code root}. Empty and relative working directories never match: a backend
   * confines those itself. {@code root} is made absolute and symlink-resolved now.
   */
  static ExecPredicate workDirOutsideRoot(String root) {
    Path resolvedRoot = RootedPaths.resolveRoot(root);
    return request -> {
      String wd = request.options().workDir();
      if (!wd.startsWith("/")) {
        return Optional.empty();
      }
      Optional<String> outside =
          Optional.of(
              "workdir "
                  + Quote.of(wd)
                  + " resolves outside root "
                  + Quote.of(resolvedRoot.toString()));
      Path p;
      try {
        p = Path.of(wd);
      } catch (InvalidPathException e) {
        // Bytes java.nio cannot name (ByteStrings escapes): judged lexically, as the runners enter
        // such a work dir only when it names the root or a path beneath it.
        return lexicallyBeneath(resolvedRoot.toString(), wd) ? Optional.empty() : outside;
      }
      Path normalized = p.normalize();
      Path resolved;
      try {
        resolved = RootedPaths.resolveExistingPrefix(normalized);
      } catch (IOException e) {
        resolved = normalized;
      }
      return resolved.startsWith(resolvedRoot) ? Optional.empty() : outside;
    };
  }

  /** Whether {@code path} is {@code root} or beneath it by its text alone, with no ".." step. */
  private static boolean lexicallyBeneath(String root, String path) {
    boolean prefix = root.equals("/") || path.equals(root) || path.startsWith(root + "/");
    return prefix && !("/" + path + "/").contains("/../");
  }

  /** The last element of {@code path}, as Go's path.Base: trailing slashes ignored. */
  private static String baseName(String path) {
    int end = path.length();
    while (end > 1 && path.charAt(end - 1) == '/') {
      end--;
    }
    String trimmed = path.substring(0, end);
    if (trimmed.equals("/")) {
      return "/";
    }
    return trimmed.substring(trimmed.lastIndexOf('/') + 1);
  }
}
