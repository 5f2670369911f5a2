package dev.confine.local;

import dev.confine.Enforcement;
import dev.confine.EnforcementReporter;
import dev.confine.ExecOptions;
import dev.confine.ExecPolicy;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.RootedPaths;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.Completion;
import dev.confine.linux.ErrnoException;
import dev.confine.linux.ExecutableLookup;
import dev.confine.linux.Execution;
import dev.confine.linux.NativeAccess;
import dev.confine.linux.SpawnSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Runs commands as host processes, without isolation: the working directory is contained in the
 * root, the environment follows the {@link dev.confine.EnvPolicy}, output is capped per stream and
 * the whole process group is killed on timeout or interrupt. Network policies other than {@link
 * NetMode#DEFAULT} and resource caps are refused with NOT_AVAILABLE: this runner cannot enforce
 * them.
 *
 * <p>Unlike the seed, when {@code exec} returns nothing it started is left running: a leader that
 * exits while a background child still holds its output gets at most the 2 s drain, then the rest
 * of its process group is killed, and {@link ExecResult#leftoversKilled()} says so.
 *
 * <p>Thread-safe; children of every runner share one event-loop thread.
 */
public final class LocalRunner implements Runner, EnforcementReporter {
  /** The default capture cap per stream: 10 MiB. */
  public static final long DEFAULT_MAX_OUTPUT_BYTES = 10L << 20;

  /** How long output may keep flowing after the leader exits (or is killed). */
  public static final Duration DRAIN = Duration.ofSeconds(2);

  private static final Enforcement ENFORCEMENT = Enforcement.builder().envAllowList(true).build();

  private final Path root;
  private final long defaultMaxOutputBytes;
  private final Supplier<Map<String, String>> hostEnvironment;

  private LocalRunner(
      Path root, long defaultMaxOutputBytes, Supplier<Map<String, String>> hostEnvironment) {
    this.root = root;
    this.defaultMaxOutputBytes = defaultMaxOutputBytes;
    this.hostEnvironment = hostEnvironment;
  }

  /** A runner rooted at {@code rootDir} with the default 10 MiB capture cap. */
  public static LocalRunner create(String rootDir) {
    return builder(rootDir).build();
  }

  /** A builder for a runner rooted at {@code rootDir}. */
  public static Builder builder(String rootDir) {
    return new Builder(rootDir);
  }

  /** The root: absolute, and symlink-resolved when it exists. */
  public Path root() {
    return root;
  }

  /**
   * Environment variables honour the allow-list; nothing else is enforced. On a host where the
   * engine cannot run, nothing at all ({@link Enforcement#NONE}).
   */
  @Override
  public Enforcement enforcement() {
    return NativeAccess.isAvailable() ? ENFORCEMENT : Enforcement.NONE;
  }

  @Override
  public ExecResult exec(String command, List<String> args, ExecOptions options) {
    ExecRequest request = ExecRequest.of(command, args, options);
    ExecOptions opts = request.options();
    String cmd = request.command();
    long deadline =
        opts.hasTimeout() ? saturatedDeadline(System.nanoTime(), opts.timeout()) : Long.MAX_VALUE;

    NativeAccess.unavailabilityCause()
        .ifPresent(
            why -> {
              throw new SandboxException(Kind.NOT_AVAILABLE, "sandbox: " + why);
            });
    if (opts.net().mode() != NetMode.DEFAULT) {
      throw new SandboxException(
          Kind.NOT_AVAILABLE,
          "sandbox: net policy "
              + opts.net().mode()
              + " not supported by local runner; requires a kernel-level isolation backend");
    }
    ExecPolicy.validate(opts, enforcement());

    Path workDir = RootedPaths.resolveWorkDir(root, opts.workDir());
    if (!Files.isDirectory(workDir)) {
      throw new SandboxException(
          Kind.INTERNAL,
          "sandbox: exec "
              + cmd
              + ": chdir "
              + workDir
              + ": "
              + (Files.exists(workDir) ? "not a directory" : "no such file or directory"));
    }
    List<String> env = opts.env().apply(hostEntries());
    String executable =
        switch (ExecutableLookup.find(cmd, workDir, System.getenv("PATH"))) {
          case ExecutableLookup.Found f -> f.path();
          case ExecutableLookup.NotFound nf ->
              throw new SandboxException(
                  Kind.NOT_FOUND, "sandbox: exec " + cmd + ": " + nf.reason());
          case ExecutableLookup.NotExecutable ne ->
              throw new SandboxException(
                  Kind.FORBIDDEN, "sandbox: exec " + cmd + ": " + ne.reason());
        };
    List<String> argv = new ArrayList<>(request.args().size() + 1);
    argv.add(cmd);
    argv.addAll(request.args());
    long cap =
        opts.resources().maxOutputBytes() > 0
            ? opts.resources().maxOutputBytes()
            : defaultMaxOutputBytes;

    Execution execution;
    try {
      execution =
          Execution.start(
              new SpawnSpec(executable, argv, env, workDir.toString(), opts.hasStdin()),
              opts.stdin(),
              cap);
    } catch (ErrnoException e) {
      throw spawnFailure(cmd, e);
    }
    Completion done = execution.runToCompletion(deadline, DRAIN.toNanos());
    return classify(cmd, opts, execution, done);
  }

  private static SandboxException spawnFailure(String cmd, ErrnoException e) {
    Kind kind =
        switch (e.errno()) {
          case 1, 13 -> Kind.FORBIDDEN; // EPERM, EACCES
          case 2 -> Kind.NOT_FOUND; // ENOENT: vanished between lookup and spawn
          default -> Kind.INTERNAL;
        };
    return new SandboxException(kind, "sandbox: exec " + cmd + ": " + e.getMessage(), e);
  }

  private static ExecResult classify(
      String cmd, ExecOptions opts, Execution execution, Completion done) {
    ExecResult.Builder b =
        ExecResult.builder()
            .stdout(execution.stdout())
            .stderr(execution.stderr())
            .stdoutTruncated(execution.stdoutTruncated())
            .stderrTruncated(execution.stderrTruncated())
            .wallTime(Duration.ofNanos(execution.wallNanos()))
            .leftoversKilled(done.leftoversKilled());
    if (done.exit() != null) {
      if (done.exit().signaled()) {
        b.signal(done.exit().signal());
      } else {
        b.exitCode(done.exit().code());
      }
    } else {
      b.exitCode(-1);
    }
    ExecResult result = b.build();
    switch (done.ending()) {
      case TIMED_OUT ->
          throw new SandboxException(
              Kind.TIMEOUT,
              "sandbox: exec "
                  + cmd
                  + ": deadline exceeded (timeout "
                  + format(opts.timeout())
                  + ")",
              null,
              result);
      case INTERRUPTED ->
          throw new SandboxException(
              Kind.ABORTED,
              "sandbox: exec " + cmd + ": cancelled (the calling thread was interrupted)",
              null,
              result);
      case EXITED -> {
        if (done.exit() == null) {
          throw new SandboxException(
              Kind.INTERNAL, "sandbox: exec " + cmd + ": " + execution.reapFailure(), null, result);
        }
        return result;
      }
    }
    throw new AssertionError(done.ending());
  }

  /** {@code 1.5s}, {@code 250ms}: readable in a message, unlike ISO-8601's PT0.25S. */
  static String format(Duration d) {
    long ms = d.toMillis();
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms >= 1000 ? ms / 1000.0 + "s" : ms + "ms";
  }

  private List<String> hostEntries() {
    Map<String, String> env = hostEnvironment.get();
    List<String> entries = new ArrayList<>(env.size());
    env.forEach((k, v) -> entries.add(k + "=" + v));
    return entries;
  }

  private static long saturatedDeadline(long now, Duration timeout) {
    long nanos;
    try {
      nanos = timeout.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
    long deadline = now + nanos;
    return deadline < now ? Long.MAX_VALUE : deadline;
  }

  @Override
  public String toString() {
    return "LocalRunner[root=" + root + "]";
  }

  /** Builds a {@link LocalRunner}. */
  public static final class Builder {
    private final String rootDir;
    private long maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES;
    private Supplier<Map<String, String>> hostEnvironment = System::getenv;

    private Builder(String rootDir) {
      this.rootDir = rootDir;
    }

    /**
     * The capture cap per stream when a call does not set one; zero or negative means no truncation
     * (up to what a Java array holds, 2 GiB).
     */
    public Builder maxOutputBytes(long maxOutputBytes) {
      this.maxOutputBytes = maxOutputBytes > 0 ? maxOutputBytes : Long.MAX_VALUE;
      return this;
    }

    /** Where the host environment comes from (default: this JVM's); for tests. */
    Builder hostEnvironment(Supplier<Map<String, String>> hostEnvironment) {
      this.hostEnvironment = hostEnvironment;
      return this;
    }

    /**
     * The runner.
     *
     * @throws SandboxException VALIDATION when the root is null or empty
     */
    public LocalRunner build() {
      if (rootDir == null || rootDir.isEmpty()) {
        throw new SandboxException(Kind.VALIDATION, "sandbox: local runner root must be set");
      }
      return new LocalRunner(RootedPaths.resolveRoot(rootDir), maxOutputBytes, hostEnvironment);
    }
  }
}
