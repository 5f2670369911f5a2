package dev.confine;

import java.io.Serial;

/**
 * A working directory (or another path) that resolves outside the runner's root, symlinks included.
 * Its kind is {@link SandboxException.Kind#FORBIDDEN}.
 */
public final class PathTraversalException extends SandboxException {
  @Serial private static final long serialVersionUID = 1L;

  /** The fixed start of every message: the seed's sentinel text. */
  public static final String MESSAGE = PREFIX + "path traversal denied";

  private final String path;
  private final String root;

  /** {@code path} escapes {@code root}. */
  public PathTraversalException(String path, String root) {
    super(
        Kind.FORBIDDEN,
        MESSAGE + ": workdir " + Quote.of(path) + " escapes root " + Quote.of(root));
    this.path = path;
    this.root = root;
  }

  /** The path as the caller gave it. */
  public String path() {
    return path;
  }

  /** The root it escapes. */
  public String root() {
    return root;
  }
}
