package dev.confine.host;

import dev.confine.PathTraversalException;
import dev.confine.RootedPaths;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.spawn.WorkDirectory;
import dev.confine.linux.sys.Errno;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * A working directory checked for an exec or a session and not entered yet: shared by the runners
 * that run host processes. Internal, not API.
 *
 * <p>The decision is {@link RootedPaths#checkWorkDir}'s (symlinks resolved as the kernel would,
 * whole components compared). The child then starts in the directory {@link #open} opens: the path
 * the check resolved, beneath the root, without following a link out of it ({@link WorkDirectory}).
 * A tree changed after the check (a symlink retargeted, a directory swapped for a link) thus either
 * still leads to a directory beneath the root or is refused as the check would refuse the changed
 * tree: nothing runs outside.
 *
 * <p>A work dir that {@code java.nio.file} cannot name (bytes that are not UTF-8, carried as {@link
 * dev.confine.ByteStrings} escapes) is resolved by the kernel alone: a relative one beneath the
 * root; an absolute one only when it names the root or a path beneath it lexically (else
 * FORBIDDEN). Its symlinks are followed only while they stay beneath the root, and a symlink with
 * an absolute target is refused even when it points inside: stricter than the check, never looser.
 *
 * @param root the runner's root
 * @param named the work dir as the caller named it
 * @param beneath the directory relative to the root ("" for the root itself), a {@link
 *     dev.confine.ByteStrings} string
 * @param shown the directory as messages show it
 */
public record WorkDir(Path root, String named, String beneath, String shown) {
  private static final boolean NIO_IS_UTF8 =
      Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"), StandardCharsets.UTF_8)
          .equals(StandardCharsets.UTF_8);

  /**
   * Checks {@code named} (empty: the root) for {@code cmd} beneath {@code root}: contained (else
   * FORBIDDEN through {@link PathTraversalException}) and an existing directory (else INTERNAL, as
   * the seed's failed chdir).
   */
  public static WorkDir check(Path root, String cmd, String named) {
    if (!nioNamesTheSameBytes(named)) {
      return bytewise(root, named);
    }
    RootedPaths.CheckedWorkDir checked = RootedPaths.checkWorkDir(root, named);
    Path workDir = checked.path();
    if (!Files.isDirectory(workDir)) {
      throw SandboxException.of(
          Kind.INTERNAL,
          "exec "
              + cmd
              + ": chdir "
              + workDir
              + ": "
              + (Files.exists(workDir) ? "not a directory" : "no such file or directory"));
    }
    return new WorkDir(
        root, named, root.relativize(checked.resolved()).toString(), workDir.toString());
  }

  /**
   * Whether a {@link Path} of {@code s} names the bytes {@link dev.confine.ByteStrings} gives for
   * it: {@code s} is text, and java.nio encodes file names as UTF-8 (the locale's encoding) or
   * {@code s} is ASCII.
   */
  private static boolean nioNamesTheSameBytes(String s) {
    if (!NIO_IS_UTF8 && !s.chars().allMatch(c -> c < 0x80)) {
      return false;
    }
    try {
      Path.of(s);
      return true;
    } catch (InvalidPathException e) {
      return false;
    }
  }

  private static WorkDir bytewise(Path root, String named) {
    String r = root.toString();
    if (!named.startsWith("/")) {
      return new WorkDir(root, named, named, (r.endsWith("/") ? r : r + "/") + named);
    }
    String beneath;
    if (named.equals(r)) {
      beneath = "";
    } else if (r.equals("/")) {
      beneath = named.substring(1);
    } else if (named.startsWith(r + "/")) {
      beneath = named.substring(r.length() + 1);
    } else {
      throw new PathTraversalException(named, r);
    }
    return new WorkDir(root, named, beneath, named);
  }

  /**
   * Opens this directory for the child of {@code cmd} to start in, refused as the check refuses: a
   * path that now leads out of the root is FORBIDDEN ({@link PathTraversalException}), a missing
   * component or a non-directory INTERNAL; a root that now passes through a symlink (moved or
   * replaced since the runner was built) FORBIDDEN.
   */
  public WorkDirectory open(String cmd) {
    try {
      return WorkDirectory.open(root.toString(), beneath);
    } catch (WorkDirectory.OpenFailed e) {
      throw refusal(cmd, e);
    }
  }

  private SandboxException refusal(String cmd, WorkDirectory.OpenFailed e) {
    String prefix = "exec " + cmd + ": ";
    Errno.Meaning meaning = Errno.meaning(e.errno());
    if (e.part() == WorkDirectory.Part.ROOT) {
      if (meaning == Errno.Meaning.SYMLINK) {
        return SandboxException.of(
            Kind.FORBIDDEN,
            prefix
                + "the root "
                + root
                + " now passes through a symlink: it was moved or replaced after the runner was"
                + " built",
            e);
      }
      return SandboxException.of(
          Kind.INTERNAL, prefix + "chdir " + root + ": " + Errno.describe(e.errno()), e);
    }
    if (meaning == Errno.Meaning.ESCAPES) {
      // What the check says of the tree as the open found it.
      return new PathTraversalException(named, root.toString());
    }
    if (meaning == Errno.Meaning.SYMLINK && !WorkDirectory.usesOpenat2()) {
      return SandboxException.of(
          Kind.FORBIDDEN,
          prefix
              + "workdir "
              + shown
              + " passes through a symlink, which this kernel (no openat2, before Linux 5.6)"
              + " cannot follow without the risk of leaving the root",
          e);
    }
    return SandboxException.of(
        meaning == Errno.Meaning.PERMISSION ? Kind.FORBIDDEN : Kind.INTERNAL,
        prefix + "chdir " + shown + ": " + Errno.describe(e.errno()),
        e);
  }
}
