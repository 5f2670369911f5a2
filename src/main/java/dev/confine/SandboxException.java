package dev.confine;

import java.io.Serial;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The one unchecked exception of Confine: a failure classified by a {@link Kind}.
 *
 * <p>Errors raised after the child process started (a timeout, a cap that tripped, an interrupt)
 * carry the output captured so far as {@link #partialResult()}; errors raised before the start
 * (policy, path, spawn) carry none.
 *
 * <p>Kinds are found anywhere in a cause chain: {@link #hasKind(Throwable, Kind)} walks causes and
 * suppressed exceptions, so wrapping a {@code SandboxException} in another exception never hides
 * its kind, and a wrapper of another kind adds to it rather than replacing it.
 */
public class SandboxException extends RuntimeException {
  @Serial private static final long serialVersionUID = 1L;

  /** The categories of failure, as the seed's {@code errdefs} defines them, with HTTP statuses. */
  public enum Kind {
    /** Something named does not exist: a bare command not on PATH, an unknown session id. */
    NOT_FOUND(404),
    /** The request is malformed: a bad policy, an empty argv, a bad cursor. */
    VALIDATION(400),
    /** The caller is not authenticated. */
    UNAUTHORIZED(401),
    /** The request is understood and refused: a path escaping the root, a non-executable file. */
    FORBIDDEN(403),
    /** The request conflicts with current state: a duplicate session id. */
    CONFLICT(409),
    /** Too many requests. */
    RATE_LIMIT(429),
    /** The call's timeout expired; the child's process tree was killed. */
    TIMEOUT(504),
    /** The operation was interrupted by the system. */
    INTERRUPTED(409),
    /** The caller cancelled the call (for example by interrupting the calling thread). */
    ABORTED(409),
    /** This runner cannot enforce what was asked on this host; nothing was run. */
    NOT_AVAILABLE(503),
    /** An unexpected failure inside Confine or the operating system. */
    INTERNAL(500),
    /** A resource cap (memory, CPU, processes) was exceeded; the child's tree was killed. */
    BUDGET_EXCEEDED(429),
    /** A policy refused the request: not on the allow-list, or denied by the approver. */
    POLICY_DENIED(403);

    private final int httpStatus;

    Kind(int httpStatus) {
      this.httpStatus = httpStatus;
    }

    /** The HTTP status that this kind maps to. */
    public int httpStatus() {
      return httpStatus;
    }
  }

  /**
   * The order in which {@link #httpStatus(Throwable)} picks a kind for an error that has several:
   * the seed's order, so an error that is both NOT_FOUND and VALIDATION maps to 404.
   */
  private static final Kind[] STATUS_ORDER = {
    Kind.NOT_FOUND,
    Kind.VALIDATION,
    Kind.UNAUTHORIZED,
    Kind.FORBIDDEN,
    Kind.CONFLICT,
    Kind.RATE_LIMIT,
    Kind.BUDGET_EXCEEDED,
    Kind.POLICY_DENIED,
    Kind.TIMEOUT,
    Kind.NOT_AVAILABLE,
    Kind.INTERNAL,
    Kind.INTERRUPTED,
    Kind.ABORTED,
  };

  private final Kind kind;
  private final transient ExecResult partialResult;

  /** A failure of the given kind. */
  public SandboxException(Kind kind, String message) {
    this(kind, message, null, null);
  }

  /** A failure of the given kind caused by {@code cause}. */
  public SandboxException(Kind kind, String message, Throwable cause) {
    this(kind, message, cause, null);
  }

  /**
   * A failure of the given kind that happened after the child started, with the output captured so
   * far.
   */
  public SandboxException(Kind kind, String message, Throwable cause, ExecResult partialResult) {
    super(Objects.requireNonNull(message, "message"), cause);
    this.kind = Objects.requireNonNull(kind, "kind");
    this.partialResult = partialResult;
  }

  /** The prefix of every message Confine writes: {@value}. */
  public static final String PREFIX = "sandbox: ";

  /** A failure of {@code kind} whose message is {@link #PREFIX} and {@code detail}. */
  public static SandboxException of(Kind kind, String detail) {
    return new SandboxException(kind, PREFIX + detail, null, null);
  }

  /** As {@link #of(Kind, String)}, caused by {@code cause}. */
  public static SandboxException of(Kind kind, String detail, Throwable cause) {
    return new SandboxException(kind, PREFIX + detail, cause, null);
  }

  /** As {@link #of(Kind, String, Throwable)}, after the child started: with its output so far. */
  public static SandboxException of(
      Kind kind, String detail, Throwable cause, ExecResult partialResult) {
    return new SandboxException(kind, PREFIX + detail, cause, partialResult);
  }

  /**
   * {@code text} as messages quote what a caller gave: in double quotes, with quotes, backslashes
   * and control characters escaped, so that empty, blank or control text stays visible and cannot
   * forge a message.
   */
  public static String quote(String text) {
    return Quote.of(text);
  }

  /** The message without {@link #PREFIX}: what went wrong, for a line that names its source. */
  public String detail() {
    String m = getMessage();
    return m.startsWith(PREFIX) ? m.substring(PREFIX.length()) : m;
  }

  /** This exception's own kind (see {@link #kindsOf(Throwable)} for the kinds of a whole chain). */
  public Kind kind() {
    return kind;
  }

  /** The result captured before the failure, when the child had started; empty otherwise. */
  public Optional<ExecResult> partialResult() {
    return Optional.ofNullable(partialResult);
  }

  /**
   * Every kind carried anywhere in the chain of {@code error}: the error itself, its causes and its
   * suppressed exceptions, depth first. Empty for {@code null} and for unclassified errors.
   */
  public static Set<Kind> kindsOf(Throwable error) {
    EnumSet<Kind> kinds = EnumSet.noneOf(Kind.class);
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    Deque<Throwable> todo = new ArrayDeque<>();
    if (error != null) {
      todo.push(error);
    }
    while (!todo.isEmpty()) {
      Throwable t = todo.pop();
      if (!seen.add(t)) {
        continue;
      }
      if (t instanceof SandboxException se) {
        kinds.add(se.kind);
      }
      if (t.getCause() != null) {
        todo.push(t.getCause());
      }
      for (Throwable s : t.getSuppressed()) {
        todo.push(s);
      }
    }
    return kinds;
  }

  /** Whether {@code kind} is carried anywhere in the chain of {@code error}. */
  public static boolean hasKind(Throwable error, Kind kind) {
    return kindsOf(error).contains(kind);
  }

  /** Whether any kind is carried anywhere in the chain of {@code error}; false for null. */
  public static boolean isClassified(Throwable error) {
    return !kindsOf(error).isEmpty();
  }

  /**
   * The HTTP status for {@code error}: 200 for null; otherwise the status of the first kind in the
   * seed's order that the chain carries; 500 for an unclassified error.
   */
  public static int httpStatus(Throwable error) {
    if (error == null) {
      return 200;
    }
    Set<Kind> kinds = kindsOf(error);
    for (Kind k : STATUS_ORDER) {
      if (kinds.contains(k)) {
        return k.httpStatus();
      }
    }
    return 500;
  }
}
