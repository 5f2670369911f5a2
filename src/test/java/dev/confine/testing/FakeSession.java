package dev.confine.testing;

import dev.confine.ProcessClosedException;
import dev.confine.session.EventStream;
import dev.confine.session.ProcessEvent;
import dev.confine.session.ProcessEventSource;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSignal;
import dev.confine.session.ProcessSignaler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A session that runs nothing: the test ends it with {@link #exit(ProcessExit)}, and every call is
 * recorded by name. {@link #terminate()} ends it as TERMINATED unless told otherwise. It has
 * neither optional capability; {@link Capable} has both.
 */
public class FakeSession implements ProcessSession {
  private final String id;
  private final int pid;
  private final List<String> calls = Collections.synchronizedList(new ArrayList<>());
  private final CompletableFuture<ProcessExit> exit = new CompletableFuture<>();
  private volatile boolean closed;
  public volatile boolean endsOnTerminate = true;
  public volatile RuntimeException terminateFailure;
  public volatile RuntimeException closeFailure;

  public FakeSession(String id, int pid) {
    this.id = id;
    this.pid = pid;
  }

  /** Ends the process with {@code e}; a later end is ignored, as a process ends once. */
  public void exit(ProcessExit e) {
    exit.complete(e);
  }

  /** The recorded calls, in order: "read", "write:DATA", "terminate", "close", ... */
  public List<String> calls() {
    synchronized (calls) {
      return List.copyOf(calls);
    }
  }

  public boolean isClosed() {
    return closed;
  }

  public void record(String call) {
    calls.add(call);
  }

  public void requireOpen() {
    if (closed) {
      throw new ProcessClosedException();
    }
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public int pid() {
    return pid;
  }

  @Override
  public ProcessOutput read(long afterSeq, int maxBytes) {
    record("read:" + afterSeq + ":" + maxBytes);
    requireOpen();
    return new ProcessOutput(afterSeq, List.of(), false);
  }

  @Override
  public ProcessOutput read(long afterSeq, int maxBytes, Duration timeout) {
    record("read:" + afterSeq + ":" + maxBytes + ":" + timeout);
    requireOpen();
    return new ProcessOutput(afterSeq, List.of(), false);
  }

  @Override
  public void write(byte[] data) {
    record("write:" + new String(data, StandardCharsets.UTF_8));
    requireOpen();
  }

  @Override
  public void closeStdin() {
    record("closeStdin");
    requireOpen();
  }

  @Override
  public void resize(int rows, int cols) {
    record("resize:" + rows + "x" + cols);
    requireOpen();
  }

  @Override
  public void terminate() {
    record("terminate");
    requireOpen();
    RuntimeException failure = terminateFailure;
    if (failure != null) {
      throw failure;
    }
    if (endsOnTerminate) {
      exit(new ProcessExit(-1, 15, ProcessExit.Reason.TERMINATED, null));
    }
  }

  @Override
  public ProcessExit waitFor() throws InterruptedException {
    record("waitFor");
    try {
      return exit.get();
    } catch (ExecutionException e) {
      throw new AssertionError(e);
    }
  }

  @Override
  public Optional<ProcessExit> waitFor(Duration timeout) throws InterruptedException {
    record("waitFor:" + timeout);
    try {
      return Optional.of(exit.get(timeout.toNanos(), TimeUnit.NANOSECONDS));
    } catch (TimeoutException e) {
      return Optional.empty();
    } catch (ExecutionException e) {
      throw new AssertionError(e);
    }
  }

  @Override
  public Optional<ProcessExit> exitValue() {
    return Optional.ofNullable(exit.getNow(null));
  }

  @Override
  public void close() {
    record("close");
    closed = true;
    exit(new ProcessExit(-1, 9, ProcessExit.Reason.SIGNALED, null));
    RuntimeException failure = closeFailure;
    if (failure != null) {
      throw failure;
    }
  }

  /** A fake session that can be signalled and watched. */
  public static final class Capable extends FakeSession
      implements ProcessSignaler, ProcessEventSource {
    public static final EventStream NO_EVENTS =
        new EventStream() {
          @Override
          public ProcessEvent take() {
            return null;
          }

          @Override
          public ProcessEvent poll(Duration timeout) {
            return null;
          }

          @Override
          public boolean isEnded() {
            return true;
          }

          @Override
          public void close() {}
        };

    public Capable(String id, int pid) {
      super(id, pid);
    }

    @Override
    public void signal(ProcessSignal signal) {
      record("signal:" + signal);
      requireOpen();
    }

    @Override
    public EventStream watch() {
      record("watch");
      requireOpen();
      return NO_EVENTS;
    }
  }
}
