package dev.confine;

import java.io.Serial;

/**
 * A read from a session's output log at a cursor whose bytes were already dropped (the log is
 * bounded), or at a negative cursor. Its kind is {@link SandboxException.Kind#NOT_FOUND}: the bytes
 * asked for no longer exist. Resume from {@link #retainedFrom()}.
 */
public final class SequenceGapException extends SandboxException {
  @Serial private static final long serialVersionUID = 1L;

  /** The seed's sentinel text. */
  public static final String MESSAGE =
      PREFIX + "output sequence gap; buffered output was truncated";

  private final long afterSeq;
  private final long retainedFrom;

  /** Bytes from {@code afterSeq} were asked for; the log holds bytes from {@code retainedFrom}. */
  public SequenceGapException(long afterSeq, long retainedFrom) {
    super(Kind.NOT_FOUND, MESSAGE + ": afterSeq " + afterSeq + ", retained from " + retainedFrom);
    this.afterSeq = afterSeq;
    this.retainedFrom = retainedFrom;
  }

  /** The cursor the caller asked for. */
  public long afterSeq() {
    return afterSeq;
  }

  /** The first byte offset the log still holds. */
  public long retainedFrom() {
    return retainedFrom;
  }
}
