package dev.confine.host;

import dev.confine.ExecOptions;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.ResourceUsage;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.Engine;
import dev.confine.linux.child.Captured;
import dev.confine.linux.child.ChildOutcome;
import dev.confine.linux.child.ChildSpec;
import dev.confine.linux.spawn.ExecutableLookup;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.WorkDirectory;
import dev.confine.linux.sys.EngineException;
import dev.confine.linux.sys.Errno;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.linux.tree.TreeUsage;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The exec pipeline of the runners that run host processes ({@code LocalRunner}, {@code
 * ConfinedRunner}): the checked request in, the working directory opened and the program found, one
 * {@link Engine#run} with the runner's guard, and the {@link ExecResult} or {@link
 * SandboxException} out.
 */
public final class HostExec {
  /** The default capture cap per stream, for every backend: 10 MiB. */
  public static final long DEFAULT_MAX_OUTPUT_BYTES = 10L << 20;

  private HostExec() {}

  /** The working directory opened for a spawn, and the program to run in it. */
  record Program(WorkDirectory dir, String executable) {}

  /**
   * Opens {@code workDir} for {@code cmd} and finds its program there. When either fails, what was
   * opened and {@code guard} are closed before the error is thrown: nothing was spawned, so a
   * cgroup made for this child goes at once.
   */
  static Program program(WorkDir workDir, String cmd, TreeGuard guard) {
    try {
      WorkDirectory dir = workDir.open(cmd);
      try {
        return new Program(dir, executable(cmd, dir));
      } catch (RuntimeException e) {
        dir.close();
        throw e;
      }
    } catch (RuntimeException e) {
      guard.close();
      throw e;
    }
  }

  /** The program to spawn for {@code cmd}: NOT_FOUND or FORBIDDEN when there is none to run. */
  private static String executable(String cmd, WorkDirectory workDir) {
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
   * Runs {@code request} on the engine under {@code guard} (which it owns: closed however the exec
   * ends, a program that cannot be found or a refused output cap included) and maps how it ended to
   * a result or an error ({@link Outcomes}). Spawn failures are classified here; a failure of
   * another type from the guard's spawn (a confinement that could not be applied, say) propagates
   * for the caller to classify. The result's wall time runs from this call to the result, the drain
   * and the tree's kill included.
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
    List<String> argv = new ArrayList<>(request.args().size() + 1);
    argv.add(request.command());
    argv.addAll(request.args());
    return run(request, argv, workDir, env, outputCap, guard, deadline);
  }

  /**
   * As {@link #run(ExecRequest, WorkDir, List, long, TreeGuard, long)}, spawning {@code launch}
   * (its first word the program, found as a command is) for the request: a wrapper around the
   * request's command, such as bubblewrap's command line. Messages name the request's command.
   */
  public static ExecResult run(
      ExecRequest request,
      List<String> launch,
      WorkDir workDir,
      List<String> env,
      long outputCap,
      TreeGuard guard,
      long deadline) {
    long startNanos = System.nanoTime();
    String cmd = request.command();
    ExecOptions opts = request.options();
    List<String> argv = List.copyOf(launch);
    long cap;
    try {
      // Streamed output is not held: only what is kept is bounded by the heap.
      boolean allStreamed = opts.stdoutStream() != null && opts.stderrStream() != null;
      cap =
          allStreamed
              ? outputCap
              : captureCap(cmd, outputCap, opts.resources().maxOutputBytes() > 0);
    } catch (RuntimeException e) {
      guard.close(); // nothing was spawned: a cgroup made for this exec goes at once
      throw e;
    }
    Program program = program(workDir, argv.get(0), guard);
    // Open until the exec is over; a spawn still using it then closes it when it ends.
    try (WorkDirectory dir = program.dir()) {
      ChildSpec spec =
          new ChildSpec(
              new SpawnSpec(program.executable(), argv, env, dir, opts.hasStdin()),
              opts.stdin(),
              opts.stdinStream(),
              cap,
              guard,
              deadline,
              opts.stdoutStream(),
              opts.stderrStream());
      // A spawn handed to another thread reports its failure from here as well.
      return Engine.run(spec, (outcome, output) -> result(cmd, opts, outcome, output, startNanos));
    } catch (ErrnoException e) {
      throw spawnFailure(cmd, e);
    } catch (EngineException e) {
      throw SandboxException.of(Kind.INTERNAL, "exec " + cmd + ": " + e.getMessage(), e);
    }
  }

  /**
   * The capture cap an exec runs with: {@code outputCap}, lowered to the most this JVM can capture
   * ({@link Engine#maxOutputCap()}: the largest Java array or an eighth of the maximum heap,
   * whichever is smaller) when it is a runner's default that nobody chose: no cap ({@link
   * Long#MAX_VALUE}) or the built-in 10 MiB on a heap under 80 MiB. The result's truncation flags
   * then say when output went past it.
   *
   * @param fromCall whether the call's own {@code maxOutputBytes} set the cap
   * @throws SandboxException VALIDATION for any other cap above that limit, naming it: the JVM
   *     would run out of heap holding it
   */
  public static long captureCap(String cmd, long outputCap, boolean fromCall) {
    long limit = Engine.maxOutputCap();
    if (!fromCall
        && (outputCap == Long.MAX_VALUE || outputCap == HostExec.DEFAULT_MAX_OUTPUT_BYTES)) {
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
    return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }

  /** The call's {@code maxOutputBytes} when positive, else the runner's default cap. */
  public static long outputCap(ExecOptions opts, long runnerDefault) {
    return opts.resources().maxOutputBytes() > 0
        ? opts.resources().maxOutputBytes()
        : runnerDefault;
  }

  /** A failed spawn of {@code cmd}, as its errno says ({@link Errno#spawnKind}). */
  public static SandboxException spawnFailure(String cmd, ErrnoException e) {
    return SandboxException.of(
        Errno.spawnKind(e.errno()), "exec " + cmd + ": " + e.getMessage(), e);
  }

  /**
   * The result of a completed exec, or the error it ended in carrying that result.
   *
   * @param startNanos when the call began ({@link System#nanoTime()}): its wall time runs from
   *     there to now
   */
  private static ExecResult result(
      String cmd, ExecOptions opts, ChildOutcome done, Captured output, long startNanos) {
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
            .childTime(Duration.ofNanos(output.childNanos()))
            .leftoversKilled(done.leftoversKilled());
    if (done.exit() == null) {
      b.exitCode(-1);
    } else if (done.exit().signaled()) {
      b.signal(done.exit().signal());
    } else {
      b.exitCode(done.exit().code());
    }
    b.stdout(output.takeStdout()).stderr(output.takeStderr());
    // After the take, which may lose what the heap could not copy.
    b.stdoutTruncated(output.stdoutTruncated());
    b.stderrTruncated(output.stderrTruncated());
    // Taken once the output is copied out of the engine: part of the caller's wait.
    b.wallTime(Duration.ofNanos(System.nanoTime() - startNanos));
    ExecResult result;
    try {
      result = b.build();
    } catch (OutOfMemoryError e) {
      // The result's own copies did not fit (other work filled the heap): a failed array
      // allocation leaves the heap usable, so this is reported, not thrown as an Error.
      throw SandboxException.of(
          Kind.NOT_AVAILABLE,
          "exec "
              + cmd
              + ": the JVM's heap could not hold the result's copy of the output ("
              + (output.takeStdout().length + (long) output.takeStderr().length)
              + " bytes); the command ran, its output is lost");
    }
    SandboxException failure =
        Outcomes.failure(
            done,
            Outcomes.Subject.EXEC,
            cmd,
            opts.timeout(),
            new Outcomes.Extras(
                output.captureFailure(), output.stdinFailure(), output.stdinWritten()),
            result);
    if (failure != null) {
      throw failure;
    }
    return result;
  }

  /** {@code 1.5s}, {@code 250ms}: readable in a message, unlike ISO-8601's PT0.25S. */
  public static String format(Duration d) {
    long ns;
    try {
      ns = d.toNanos();
    } catch (ArithmeticException e) {
      return d.toSeconds() + "s";
    }
    if (ns < 1_000) {
      return ns + "ns";
    }
    if (ns < 1_000_000) {
      return exact(ns, 1_000) + "us";
    }
    if (ns < 1_000_000_000) {
      return exact(ns, 1_000_000) + "ms";
    }
    return exact(ns, 1_000_000_000) + "s";
  }

  /** {@code ns / unit} with every digit it has and no trailing zeros: 1.5, 2, 0.000001. */
  private static String exact(long ns, long unit) {
    return BigDecimal.valueOf(ns)
        .divide(BigDecimal.valueOf(unit))
        .stripTrailingZeros()
        .toPlainString();
  }
}
