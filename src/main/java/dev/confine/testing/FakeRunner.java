package dev.confine.testing;

import dev.confine.Enforcement;
import dev.confine.EnforcementReporter;
import dev.confine.ExecOptions;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.Runner;
import dev.confine.SandboxException;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * A test double for your own tests: records every request and answers with scripted results or
 * failures, without running anything. Thread-safe.
 *
 * <p>Answers come from the queue filled by {@link #enqueue(ExecResult)} and {@link
 * #enqueueFailure(RuntimeException)}, in order; once the queue is empty, from the responder set by
 * {@link #respondWith(Function)} (by default: exit 0, no output). A stdin stream in the options is
 * recorded by reference and never read: a responder that wants the input reads it.
 *
 * <pre>{@code
 * FakeRunner fake = new FakeRunner();
 * fake.enqueue(ExecResult.of(0, "hello\n", ""));
 * Runner runner = Runners.composeLocal(fake, policy);
 * runner.exec("echo", List.of("hello"), null);
 * assertEquals("echo", fake.lastRequest().command());
 * }</pre>
 */
public final class FakeRunner implements Runner, EnforcementReporter {
  private final Deque<Object> script = new ArrayDeque<>();
  private final List<ExecRequest> requests = new ArrayList<>();
  private Function<ExecRequest, ExecResult> responder = r -> ExecResult.ofExit(0);
  private Enforcement enforcement = Enforcement.NONE;

  /** A fake with an empty script, answering exit 0, reporting {@link Enforcement#NONE}. */
  public FakeRunner() {}

  /** Queues {@code result} as the answer to one call. */
  public synchronized FakeRunner enqueue(ExecResult result) {
    script.add(Objects.requireNonNull(result, "result"));
    return this;
  }

  /** Queues {@code failure} to be thrown by one call. */
  public synchronized FakeRunner enqueueFailure(RuntimeException failure) {
    script.add(Objects.requireNonNull(failure, "failure"));
    return this;
  }

  /** Answers calls beyond the queue with {@code responder}, which may also throw. */
  public synchronized FakeRunner respondWith(Function<ExecRequest, ExecResult> responder) {
    this.responder = Objects.requireNonNull(responder, "responder");
    return this;
  }

  /** Reports {@code enforcement} (by default {@link Enforcement#NONE}). */
  public synchronized FakeRunner reporting(Enforcement enforcement) {
    this.enforcement = Objects.requireNonNull(enforcement, "enforcement");
    return this;
  }

  /**
   * Records the request and answers from the script.
   *
   * @throws SandboxException VALIDATION for a malformed command or argument list, like any runner
   */
  @Override
  public ExecResult exec(String command, List<String> args, ExecOptions options) {
    ExecRequest request = ExecRequest.of(command, args, options);
    Object next;
    Function<ExecRequest, ExecResult> fallback;
    synchronized (this) {
      requests.add(request);
      next = script.poll();
      fallback = responder;
    }
    if (next instanceof RuntimeException failure) {
      throw failure;
    }
    ExecResult result = next instanceof ExecResult r ? r : fallback.apply(request);
    return streamed(result, request.options());
  }

  /**
   * As the real runners treat streamed output: the result's stdout (stderr) written to the options'
   * {@code stdoutStream} ({@code stderrStream}) when there is one, and empty in the result
   * returned; a stream that fails is left as it is. A scripted failure's partial result is thrown
   * unchanged.
   */
  private static ExecResult streamed(ExecResult result, ExecOptions options) {
    if (result == null || (options.stdoutStream() == null && options.stderrStream() == null)) {
      return result;
    }
    ExecResult.Builder b = result.toBuilder();
    if (options.stdoutStream() != null) {
      write(options.stdoutStream(), result.stdout());
      b.stdout(new byte[0]);
    }
    if (options.stderrStream() != null) {
      write(options.stderrStream(), result.stderr());
      b.stderr(new byte[0]);
    }
    return b.build();
  }

  private static void write(OutputStream stream, byte[] bytes) {
    try {
      stream.write(bytes);
      stream.flush();
    } catch (IOException e) {
      // A real exec's child would get EPIPE here; the script's result stands.
    }
  }

  /** Every request received, in order. */
  public synchronized List<ExecRequest> requests() {
    return List.copyOf(requests);
  }

  /**
   * The most recent request.
   *
   * @throws IllegalStateException when there was none
   */
  public synchronized ExecRequest lastRequest() {
    return Recorded.last(requests, "FakeRunner received no request");
  }

  /** How many requests were received. */
  public synchronized int callCount() {
    return requests.size();
  }

  /** How many scripted answers are still queued. */
  public synchronized int pending() {
    return script.size();
  }

  /** Forgets the requests and the queue; keeps the responder and the enforcement report. */
  public synchronized void reset() {
    requests.clear();
    script.clear();
  }

  @Override
  public synchronized Enforcement enforcement() {
    return enforcement;
  }
}
