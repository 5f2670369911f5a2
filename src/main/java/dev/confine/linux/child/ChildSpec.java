package dev.confine.linux.child;

import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.tree.TreeGuard;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Objects;

/**
 * One exec for the engine: what to spawn, what its stdin gets, how much of its output to keep, what
 * holds its tree, and until when it may run.
 *
 * @param spawn the program, argv, environment and working directory
 * @param stdin the bytes for its stdin (when {@code spawn.pipeStdin()} and no stream), or null
 * @param stdinStream a stream fed to its stdin while it runs, or null
 * @param outputCap how many bytes of each output stream to keep, at most {@link
 *     Execution#maxOutputCap()}
 * @param guard what holds the tree and enforces its caps, owned by the exec from the call on
 * @param deadlineNanos when the tree is killed ({@link System#nanoTime()} based; {@code
 *     Long.MAX_VALUE}: never)
 * @param stdoutSink where stdout is streamed as it comes (its first {@code outputCap} bytes; an
 *     {@link OutputPump}), or null to keep it
 * @param stderrSink the same for stderr
 */
public record ChildSpec(
    SpawnSpec spawn,
    byte[] stdin,
    InputStream stdinStream,
    long outputCap,
    TreeGuard guard,
    long deadlineNanos,
    OutputStream stdoutSink,
    OutputStream stderrSink) {
  /** Checks the references. */
  public ChildSpec {
    Objects.requireNonNull(spawn, "spawn");
    Objects.requireNonNull(guard, "guard");
  }

  /** An exec whose output is kept, not streamed. */
  public ChildSpec(
      SpawnSpec spawn,
      byte[] stdin,
      InputStream stdinStream,
      long outputCap,
      TreeGuard guard,
      long deadlineNanos) {
    this(spawn, stdin, stdinStream, outputCap, guard, deadlineNanos, null, null);
  }
}
