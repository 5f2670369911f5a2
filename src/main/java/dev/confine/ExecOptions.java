package dev.confine;

import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * The per-call policy of an exec.
 *
 * <p>Null components take their defaults at construction: {@code workDir} "", {@code timeout}
 * {@link Duration#ZERO}, {@code env} {@link EnvPolicy#inheritAll()}, {@code net} {@link
 * NetPolicy#defaults()}, {@code resources} {@link ResourceLimits#NONE}. {@code stdin} keeps the
 * difference between null (no stdin: the child reads end-of-file) and empty (an empty pipe). The
 * stdin bytes are copied in and out, so an instance never changes.
 *
 * <p>Instead of bytes, stdin can be a stream ({@link Builder#stdinStream(InputStream)}), which the
 * runner pipes into the child while it runs, so input that is large, endless or produced as the
 * child answers never has to be held whole; the child starts at once and the timeout counts from
 * the start. A stream is not a value: it is passed by reference (to decorators, predicates and
 * approvers too, which must not read it), compared by identity, and read by one exec only. The exec
 * reads it on a thread of its own until its end, until the child closes its stdin, or until the
 * exec ends, whichever comes first; it reads ahead of the child (up to 64 KiB), so bytes it read
 * that the child did not take are consumed, and it never closes the stream. When the exec ends
 * while a read of the stream blocks, that read is interrupted (which ends reads of an interruptible
 * channel's stream, and closes that channel) and the child's pipe is closed at once; a read that
 * ignores interrupts keeps the thread until it returns, and its bytes are dropped. A stream that
 * fails ({@link java.io.IOException}) ends the child's input there, and the exec fails with
 * INTERNAL carrying the result.
 *
 * <p>The child's stdout and stderr are kept in the result, or, with {@link
 * Builder#stdoutStream(OutputStream)} and {@link Builder#stderrStream(OutputStream)}, streamed:
 * each read of the child's pipe is written to the stream and flushed as it comes, on a thread of
 * the exec's own, in the child's order, and the next read waits for that write, so a stream that is
 * slow to take the bytes holds the child back as a pipe would (the timeout still holds: the tree is
 * killed on time). The first {@code maxOutputBytes} of each are written (the cap's truncation flag
 * says when there was more, which was read and dropped); the result's bytes for a streamed output
 * are empty. A stream that fails (an {@link java.io.IOException}, for example a closed pipe
 * downstream) ends the streaming: the child's pipe is closed, so that its next write fails (EPIPE,
 * SIGPIPE) as it would writing to that stream itself. The exec returns once every byte it read was
 * written (a stream that blocks for more than a second after the exec ended is left to finish on
 * its own). Like the stdin stream, an output stream is passed by reference, compared by identity,
 * and not closed.
 *
 * @param workDir the working directory: empty = the runner's root; relative = beneath the root;
 *     absolute = must resolve (symlinks included) inside the root
 * @param stdin bytes piped to the child, or null for none (or for a stream)
 * @param timeout the deadline for the whole call, after which the child's tree is killed; ZERO =
 *     none
 * @param env which environment variables the child sees
 * @param net what network the child may reach
 * @param resources caps on the child's tree
 * @param stdinStream a stream piped to the child as it runs, or null; never together with {@code
 *     stdin} bytes
 * @param stdoutStream where the child's stdout is streamed as it comes, or null to keep it in the
 *     result
 * @param stderrStream the same for stderr
 */
public record ExecOptions(
    String workDir,
    byte[] stdin,
    Duration timeout,
    EnvPolicy env,
    NetPolicy net,
    ResourceLimits resources,
    InputStream stdinStream,
    OutputStream stdoutStream,
    OutputStream stderrStream) {

  private static final ExecOptions DEFAULTS =
      new ExecOptions("", null, Duration.ZERO, null, null, null, null, null, null);

  /**
   * Options without a stdin stream: the canonical constructor before {@code stdinStream} was added.
   *
   * @throws SandboxException as the canonical constructor
   */
  public ExecOptions(
      String workDir,
      byte[] stdin,
      Duration timeout,
      EnvPolicy env,
      NetPolicy net,
      ResourceLimits resources) {
    this(workDir, stdin, timeout, env, net, resources, null, null, null);
  }

  /**
   * Options whose output is kept: the canonical constructor before the output streams were added.
   *
   * @throws SandboxException as the canonical constructor
   */
  public ExecOptions(
      String workDir,
      byte[] stdin,
      Duration timeout,
      EnvPolicy env,
      NetPolicy net,
      ResourceLimits resources,
      InputStream stdinStream) {
    this(workDir, stdin, timeout, env, net, resources, stdinStream, null, null);
  }

  /**
   * Applies the defaults and copies stdin.
   *
   * @throws SandboxException VALIDATION for a negative timeout, a work dir holding NUL, or stdin
   *     given both as bytes and as a stream
   */
  public ExecOptions {
    if (stdin != null && stdinStream != null) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "stdin is given both as bytes and as a stream; give one");
    }
    workDir = workDir == null ? "" : workDir;
    if (workDir.indexOf('\0') >= 0) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION, "workdir " + Quote.of(workDir) + " holds NUL");
    }
    stdin = stdin == null ? null : stdin.clone();
    timeout = timeout == null ? Duration.ZERO : timeout;
    if (timeout.isNegative()) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION, "timeout " + timeout + " must not be negative");
    }
    env = env == null ? EnvPolicy.inheritAll() : env;
    net = net == null ? NetPolicy.defaults() : net;
    resources = resources == null ? ResourceLimits.NONE : resources;
  }

  /** Every component at its default. */
  public static ExecOptions defaults() {
    return DEFAULTS;
  }

  /** {@code options}, or {@link #defaults()} when null. */
  public static ExecOptions orDefaults(ExecOptions options) {
    return options == null ? DEFAULTS : options;
  }

  /** A copy of the stdin bytes, or null when the child gets no stdin. */
  @Override
  public byte[] stdin() {
    return stdin == null ? null : stdin.clone();
  }

  /** Whether the child gets a stdin pipe (possibly empty): from bytes or from a stream. */
  public boolean hasStdin() {
    return stdin != null || stdinStream != null;
  }

  /** The length of the stdin bytes, or -1 when there are none (no stdin, or a stream). */
  public int stdinLength() {
    return stdin == null ? -1 : stdin.length;
  }

  /** Whether a timeout is set. */
  public boolean hasTimeout() {
    return !timeout.isZero();
  }

  /** A builder starting from these options. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** A builder starting from {@link #defaults()}. */
  public static Builder builder() {
    return new Builder(DEFAULTS);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ExecOptions other
        && workDir.equals(other.workDir)
        && Arrays.equals(stdin, other.stdin)
        && timeout.equals(other.timeout)
        && env.equals(other.env)
        && net.equals(other.net)
        && resources.equals(other.resources)
        && stdinStream == other.stdinStream
        && stdoutStream == other.stdoutStream
        && stderrStream == other.stderrStream;
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        workDir,
        Arrays.hashCode(stdin),
        timeout,
        env,
        net,
        resources,
        System.identityHashCode(stdinStream),
        System.identityHashCode(stdoutStream),
        System.identityHashCode(stderrStream));
  }

  @Override
  public String toString() {
    return "ExecOptions[workDir="
        + workDir
        + ", stdin="
        + (stdinStream != null ? "stream" : stdin == null ? "null" : stdin.length + " bytes")
        + ", timeout="
        + timeout
        + ", env="
        + env
        + ", net="
        + net
        + ", resources="
        + resources
        + (stdoutStream != null ? ", stdout=stream" : "")
        + (stderrStream != null ? ", stderr=stream" : "")
        + "]";
  }

  /** Builds {@link ExecOptions}. */
  public static final class Builder {
    private String workDir;
    private byte[] stdin;
    private Duration timeout;
    private EnvPolicy env;
    private NetPolicy net;
    private ResourceLimits resources;
    private InputStream stdinStream;
    private OutputStream stdoutStream;
    private OutputStream stderrStream;

    private Builder(ExecOptions from) {
      workDir = from.workDir;
      stdin = from.stdin;
      timeout = from.timeout;
      env = from.env;
      net = from.net;
      resources = from.resources;
      stdinStream = from.stdinStream;
      stdoutStream = from.stdoutStream;
      stderrStream = from.stderrStream;
    }

    /** Sets the working directory (empty or null = the runner's root). */
    public Builder workDir(String workDir) {
      this.workDir = workDir;
      return this;
    }

    /**
     * Sets the stdin bytes (null = no stdin, empty = an empty pipe); they are copied. Replaces a
     * stdin stream.
     */
    public Builder stdin(byte[] stdin) {
      this.stdin = stdin == null ? null : stdin.clone();
      this.stdinStream = null;
      return this;
    }

    /**
     * Sets a stream to pipe into the child's stdin while it runs (null = no stdin), kept by
     * reference, not copied (see {@link ExecOptions}). Replaces stdin bytes.
     */
    public Builder stdinStream(InputStream stdin) {
      this.stdinStream = stdin;
      this.stdin = null;
      return this;
    }

    /**
     * Streams the child's stdout into {@code out} as it comes instead of keeping it (null: keep
     * it), kept by reference (see {@link ExecOptions}).
     */
    public Builder stdoutStream(OutputStream out) {
      this.stdoutStream = out;
      return this;
    }

    /** As {@link #stdoutStream(OutputStream)}, for stderr. */
    public Builder stderrStream(OutputStream err) {
      this.stderrStream = err;
      return this;
    }

    /** Sets the timeout (ZERO or null = none). */
    public Builder timeout(Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    /** Sets the environment policy. */
    public Builder env(EnvPolicy env) {
      this.env = env;
      return this;
    }

    /** Sets the network policy. */
    public Builder net(NetPolicy net) {
      this.net = net;
      return this;
    }

    /** Sets the resource limits. */
    public Builder resources(ResourceLimits resources) {
      this.resources = resources;
      return this;
    }

    /** The options. */
    public ExecOptions build() {
      return new ExecOptions(
          workDir, stdin, timeout, env, net, resources, stdinStream, stdoutStream, stderrStream);
    }
  }
}
