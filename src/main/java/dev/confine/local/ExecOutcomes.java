package dev.confine.local;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceUsage;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.Completion;
import dev.confine.linux.ErrnoException;
import dev.confine.linux.Execution;
import dev.confine.linux.TreeUsage;
import java.time.Duration;

/**
 * How an exec on the engine turns into an {@link ExecResult} or a {@link SandboxException}: shared
 * by the runners that run host processes ({@link LocalRunner}, {@code ConfinedRunner}). Internal,
 * not API.
 */
public final class ExecOutcomes {
  private ExecOutcomes() {}

  public static SandboxException spawnFailure(String cmd, ErrnoException e) {
    Kind kind =
        switch (e.errno()) {
          case 1, 13 -> Kind.FORBIDDEN; // EPERM, EACCES
          case 2 -> Kind.NOT_FOUND; // ENOENT: vanished between lookup and spawn
          default -> Kind.INTERNAL;
        };
    return new SandboxException(kind, "sandbox: exec " + cmd + ": " + e.getMessage(), e);
  }

  public static ExecResult classify(
      String cmd, ExecOptions opts, Execution execution, Completion done) {
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
    if (done.unenforceable() != null) {
      throw new SandboxException(
          Kind.NOT_AVAILABLE,
          "sandbox: resource caps became unenforceable while executing "
              + cmd
              + ": "
              + done.unenforceable().getMessage(),
          done.unenforceable(),
          result);
    }
    if (done.exceeded() != null) {
      throw new SandboxException(
          Kind.BUDGET_EXCEEDED,
          "sandbox: " + done.exceeded() + " resource cap exceeded while executing " + cmd,
          null,
          result);
    }
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
