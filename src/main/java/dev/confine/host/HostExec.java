package dev.confine.host;

import dev.confine.ExecOptions;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.ResourceUsage;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.child.Completion;
import dev.confine.linux.child.Execution;
import dev.confine.linux.spawn.ExecutableLookup;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.WorkDirectory;
import dev.confine.linux.sys.EngineException;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.linux.tree.TreeUsage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * How an exec on the engine turns into an {@link ExecResult} or a {@link SandboxException}: shared
 * by the runners that run host processes ({@code LocalRunner}, {@code ConfinedRunner}). Internal,
 * not API.
 */
public final class ExecOutcomes {
  /** The default capture cap per stream, for every backend: 10 MiB. */
  public static final long DEFAULT_MAX_OUTPUT_BYTES = 10L << 20;

  /** How long output may keep flowing after the leader exits (or is killed). */
  public static final Duration DRAIN = Duration.ofSeconds(2);

  private ExecOutcomes() {}

  /**
   * Checks the working directory for {@code cmd}: see {@link WorkDir#check}.
   *
   * @throws SandboxException FORBIDDEN when it is not contained in the root, INTERNAL when it is
   *     not an existing directory
   */
  public static WorkDir workDir(Path root, String cmd, ExecOptions opts) {
    return WorkDir.check(root, cmd, opts.workDir());
  }

  /** The program to spawn for {@code cmd}: NOT_FOUND or FORBIDDEN when there is none to run. */
  public static String executable(String cmd, WorkDirectory workDir) {
    return switch (ExecutableLookup.find(
        cmd, workDir, HostEnvironment.ofThisProcess().get("PATH"))) {
      case ExecutableLookup.Found f -> f.path();
      case ExecutableLookup.NotFound nf ->
          throw SandboxException.of(Kind.NOT_FOUND, "exec " + cmd + ": " + nf.reason());
      case ExecutableLookup.NotExecutable ne ->
          throw SandboxException.of(Kind.FORBIDDEN, "exec " + cmd + ": " + ne.reason());
    };
  }

  /**
   * Spawns under {@code guard} (which it owns: closed however the exec ends, a program that cannot
   * be found or a refused output cap included), waits as an exec does and classifies the outcome.
   * Spawn failures are classified here; a failure of another type from the guard's spawn (a
   * confinement that could not be applied, say) propagates for the caller to classify. The result's
   * wall time runs from this call to the result, the drain and the tree's kill included.
   *
   * @param outputCap the capture cap per stream ({@link #outputCap}); {@link Long#MAX_VALUE} (a
   *     runner built without one) keeps what this JVM can capture, {@link #captureCap}
   * @param deadline the call's deadline ({@link System#nanoTime()} based)
   * @throws SandboxException VALIDATION, before anything runs, for a finite cap above what this JVM
   *     can capture
   */
  public static ExecResult run(
      ExecRequest request,
      WorkDir workDir,
      List<String> env,
      long outputCap,
      TreeGuard guard,
      long deadline) {
    long startNanos = System.nanoTime();
    String cmd = request.command();
    ExecOptions opts = request.options();
    List<String> argv = new ArrayList<>(request.args().size() + 1);
    argv.add(cmd);
    argv.addAll(request.args());
    WorkDirectory dir;
    String executable;
    long cap;
    try {
      cap = captureCap(cmd, outputCap, opts.resources().maxOutputBytes() > 0);
      dir = workDir.open(cmd);
      try {
        executable = executable(cmd, dir);
      } catch (RuntimeException e) {
        dir.close();
        throw e;
      }
    } catch (RuntimeException e) {
      guard.close(); // nothing was spawned: a cgroup made for this exec goes at once
      throw e;
    }
    Execution execution;
    Completion done;
    // Open until the exec is over; a spawn still using it then closes it when it ends.
    try (dir) {
      SpawnSpec spec = new SpawnSpec(executable, argv, env, dir, opts.hasStdin());
      execution =
          opts.stdinStream() != null
              ? Execution.startStreaming(spec, opts.stdinStream(), cap, guard)
              : Execution.start(spec, opts.stdin(), cap, guard);
      // A spawn handed to another thread reports its failure from here.
      done = execution.runToCompletion(deadline, ExecOutcomes.DRAIN.toNanos());
    } catch (ErrnoException e) {
      throw spawnFailure(cmd, e);
    } catch (EngineException e) {
      throw SandboxException.of(Kind.INTERNAL, "exec " + cmd + ": " + e.getMessage(), e);
    }
    return classify(cmd, opts, execution, done, startNanos);
  }

  /**
   * The capture cap an exec runs with: {@code outputCap}, lowered to the most this JVM can capture
   * ({@link Execution#maxOutputCap()}: the largest Java array or an eighth of the maximum heap,
   * whichever is smaller) when it is a runner's default that nobody chose: no cap ({@link
   * Long#MAX_VALUE}) or the built-in 10 MiB on a heap under 80 MiB. The result's truncation flags
   * then say when output went past it.
   *
   * @param fromCall whether the call's own {@code maxOutputBytes} set the cap
   * @throws SandboxException VALIDATION for any other cap above that limit, naming it: the JVM
   *     would run out of heap holding it
   */
  public static long captureCap(String cmd, long outputCap, boolean fromCall) {
    long limit = Execution.maxOutputCap();
    if (!fromCall
        && (outputCap == Long.MAX_VALUE || outputCap == ExecOutcomes.DEFAULT_MAX_OUTPUT_BYTES)) {
      return Math.min(outputCap, limit);
    }
    if (outputCap > limit) {
      long heap = Runtime.getRuntime().maxMemory();
      throw SandboxException.of(
          Kind.VALIDATION,
          "exec "
              + cmd
              + ": maxOutputBytes "
              + outputCap
              + " ("
              + size(outputCap)
              + ") is more than this JVM can capture per stream: at most "
              + limit
              + " bytes ("
              + size(limit)
              + "), "
              + (limit == heap / 8
                  ? "an eighth of its "
                      + size(heap)
                      + " maximum heap; lower the cap or give the JVM"
                      + " a larger heap (-Xmx)"
                  : "the largest Java array; lower the cap"));
    }
    return outputCap;
  }

  /** {@code 1.5 GiB}, {@code 640.0 KiB}, {@code 12 bytes}. */
  static String size(long bytes) {
    String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
      return bytes + " bytes";
    }
    double v = bytes;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(java.util.Locale.ROOT, "%.1f %s", v, units[u]);
  }

  /** The call's {@code maxOutputBytes} when positive, else the runner's default cap. */
  public static long outputCap(ExecOptions opts, long runnerDefault) {
    return opts.resources().maxOutputBytes() > 0
        ? opts.resources().maxOutputBytes()
        : runnerDefault;
  }

  public static SandboxException spawnFailure(String cmd, ErrnoException e) {
    Kind kind =
        switch (e.errno()) {
          case 1, 13 -> Kind.FORBIDDEN; // EPERM, EACCES
          case 2 -> Kind.NOT_FOUND; // ENOENT: vanished between lookup and spawn
          default -> Kind.INTERNAL;
        };
    return SandboxException.of(kind, "exec " + cmd + ": " + e.getMessage(), e);
  }

  /**
   * The result of a completed exec, or the error it ended in carrying that result.
   *
   * @param startNanos when the call began ({@link System#nanoTime()}): its wall time runs from
   *     there to now
   */
  public static ExecResult classify(
      String cmd, ExecOptions opts, Execution execution, Completion done, long startNanos) {
    TreeUsage u = done.usage();
    ExecResult.Builder b =
        ExecResult.builder()
            .usage(
                u.equals(TreeUsage.NOT_MEASURED)
                    ? ResourceUsage.NOT_MEASURED
                    : new ResourceUsage(
                        u.peakMemoryBytes(),
                        u.cpuUserNanos() < 0 ? null : Duration.ofNanos(u.cpuUserNanos()),
                        u.cpuSystemNanos() < 0 ? null : Duration.ofNanos(u.cpuSystemNanos()),
                        u.pidsLimitHit()))
            .childTime(Duration.ofNanos(execution.childNanos()))
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
    ExecResult result =
        execution.handOver(
            () -> {
              b.stdout(execution.takeStdout()).stderr(execution.takeStderr());
              // After the take, which may lose what the heap could not copy.
              b.stdoutTruncated(execution.stdoutTruncated());
              b.stderrTruncated(execution.stderrTruncated());
              // Taken once the output is copied out of the engine: part of the caller's wait.
              b.wallTime(Duration.ofNanos(System.nanoTime() - startNanos));
              try {
                return b.build();
              } catch (OutOfMemoryError e) {
                // The result's own copies did not fit (other work filled the heap): a failed array
                // allocation leaves the heap usable, so this is reported, not thrown as an Error.
                throw SandboxException.of(
                    Kind.NOT_AVAILABLE,
                    "exec "
                        + cmd
                        + ": the JVM's heap could not hold the result's copy of the output ("
                        + (execution.takeStdout().length + (long) execution.takeStderr().length)
                        + " bytes); the command ran, its output is lost");
              }
            });
    if (done.unenforceable() != null) {
      throw SandboxException.of(
          Kind.NOT_AVAILABLE,
          "resource caps became unenforceable while executing "
              + cmd
              + ": "
              + done.unenforceable().getMessage(),
          done.unenforceable(),
          result);
    }
    String lost = execution.captureFailure();
    if (lost != null) {
      throw SandboxException.of(
          Kind.NOT_AVAILABLE,
          "exec "
              + cmd
              + ": output capture stopped short of its cap, "
              + lost
              + " (the rest was read and dropped); lower maxOutputBytes, run fewer large execs at"
              + " once or give the JVM more heap",
          null,
          result);
    }
    if (done.exceeded() != null) {
      throw SandboxException.of(
          Kind.BUDGET_EXCEEDED,
          "" + done.exceeded().exceededMessage() + " while executing " + cmd,
          null,
          result);
    }
    Throwable stdin = execution.stdinFailure();
    if (stdin != null && done.ending() == Completion.Ending.EXITED) {
      throw SandboxException.of(
          Kind.INTERNAL,
          "exec "
              + cmd
              + ": reading its stdin stream failed after "
              + execution.stdinWritten()
              + " bytes ("
              + stdin
              + "); the command read end of file there",
          stdin,
          result);
    }
    switch (done.ending()) {
      case TIMED_OUT ->
          throw SandboxException.of(
              Kind.TIMEOUT,
              "exec " + cmd + ": deadline exceeded (timeout " + format(opts.timeout()) + ")",
              null,
              result);
      case INTERRUPTED ->
          throw SandboxException.of(
              Kind.ABORTED,
              "exec " + cmd + ": cancelled (the calling thread was interrupted)",
              null,
              result);
      case EXITED -> {
        if (done.exit() == null) {
          throw SandboxException.of(
              Kind.INTERNAL, "exec " + cmd + ": " + execution.reapFailure(), null, result);
        }
        return result;
      }
    }
    throw new AssertionError(done.ending());
  }

  /** {@code 1.5s}, {@code 250ms}: readable in a message, unlike ISO-8601's PT0.25S. */
  public static String format(Duration d) {
    long ms = d.toMillis();
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms >= 1000 ? ms / 1000.0 + "s" : ms + "ms";
  }

  public static long saturatedDeadline(long now, Duration timeout) {
    long nanos;
    try {
      nanos = timeout.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
    long deadline = now + nanos;
    return deadline < now ? Long.MAX_VALUE : deadline;
  }
}
