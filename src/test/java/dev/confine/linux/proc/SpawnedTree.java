package dev.confine.linux.proc;

import dev.confine.linux.child.Execution;
import dev.confine.linux.spawn.SpawnSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** A process tree started by the engine for a test, killed with its whole group on close. */
final class SpawnedTree implements AutoCloseable {
  static final List<String> ENV = List.of("PATH=/usr/bin:/bin", "LC_ALL=C");

  private final Execution execution;

  private SpawnedTree(Execution execution) {
    this.execution = execution;
  }

  /** {@code /bin/sh -c script} in its own session. */
  static SpawnedTree shell(String script) {
    return exec("/bin/sh", "sh", "-c", script);
  }

  /** {@code executable} with {@code argv} in its own session. */
  static SpawnedTree exec(String executable, String... argv) {
    return new SpawnedTree(
        Execution.startWatched(
            new SpawnSpec(executable, List.of(argv), ENV, "/", false), null, 1 << 20));
  }

  int pid() {
    return execution.pid();
  }

  Execution execution() {
    return execution;
  }

  String stdout() {
    return new String(execution.stdout(), StandardCharsets.UTF_8);
  }

  /** Waits until stdout contains {@code text}. */
  String awaitStdout(String text, Duration timeout) throws InterruptedException {
    await(() -> stdout().contains(text), timeout, "stdout to contain " + text);
    return stdout();
  }

  /** Whether the leader exits within {@code timeout}. */
  boolean awaitExit(Duration timeout) throws InterruptedException {
    return execution.awaitExit(System.nanoTime() + timeout.toNanos());
  }

  static void await(BooleanSupplier condition, Duration timeout, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      TimeUnit.MILLISECONDS.sleep(10);
    }
  }

  @Override
  public void close() {
    execution.killGroup();
    execution.awaitExitUninterruptibly(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
    execution.closeStreams();
  }
}
