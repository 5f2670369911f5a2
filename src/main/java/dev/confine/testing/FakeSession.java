package dev.confine.testing;

import dev.confine.ProcessClosedException;
import dev.confine.SandboxException;
import dev.confine.SequenceGapException;
import dev.confine.host.Deadlines;
import dev.confine.host.OutputLog;
import dev.confine.session.EventStream;
import dev.confine.session.ForwardingProcessSession;
import dev.confine.session.ProcessEventSource;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSignal;
import dev.confine.session.ProcessSignaler;
import dev.confine.session.ProcessSpec;
import dev.confine.session.ProcessStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A {@link ProcessSession} that runs nothing, for your own tests: the test scripts the process's
 * output ({@link #stdout}, {@link #stderr}, {@link #tty}) and its end ({@link #exit}), and reads
 * back what the code under test did with the session ({@link #calls()}, {@link #stdin()}, {@link
 * #isStdinClosed()}, {@link #rows()}, ...). Thread-safe.
 *
 * <p>It keeps the contract of the library's own sessions. The output is a log addressed by byte
 * offsets: each scripted write is one chunk, never merged, and a read returns the chunks from its
 * cursor on (the first may start inside a chunk, the last is cut at {@code maxBytes}). The log is
 * bounded by the spec's {@code maxOutputBytes} (10 MiB when not positive): beyond it the oldest
 * whole chunks are dropped, never the newest, and a read from a dropped offset throws {@link
 * SequenceGapException}. A read blocks until there is output from its cursor, the process has
 * ended, the session is closed or its timeout passes; {@link #watch()} replays the retained output
 * as events, then sends live ones, bounded at 256 events with a LAG event as the real streams are.
 * After {@link #close()} every operation but {@link #waitFor()}, {@link #exitValue()}, {@link
 * #id()} and {@link #pid()} throws {@link ProcessClosedException}. Output scripted after the
 * process ended or the session was closed is dropped, as the real log drops it.
 *
 * <p>It is a {@link ProcessSignaler} and a {@link ProcessEventSource}, as the sessions of the
 * library's runners are; {@link #asPlainSession()} is the same session without either, for code
 * that must cope with a session lacking them.
 *
 * <p>What it does on its own: {@link #terminate()} ends the process as {@link
 * ProcessExit.Reason#TERMINATED} (signal 15) unless {@link #ignoreTerminate() told otherwise};
 * {@link #close()} ends a running one as {@link ProcessExit.Reason#SIGNALED} (signal 9), as the
 * real close kills the tree. An interrupt ({@link #signal}) ends nothing by itself: end the process
 * from {@link #onSignal} when the program under test would die of it.
 *
 * <pre>{@code
 * FakeSession s = new FakeSession(ProcessSpec.pipes(List.of("make")).withId("build"), 4242);
 * s.stdout("compiling\n").stderr("warning: x\n").exit(0);
 * ProcessOutput out = s.read(0, 1024);  // two chunks: stdout at 0, stderr at 10; eof
 * }</pre>
 */
public final class FakeSession implements ProcessSession, ProcessSignaler, ProcessEventSource {
  /** The log's bound when the spec's {@code maxOutputBytes} is not positive, as the backends'. */
  public static final long DEFAULT_MAX_LOG_BYTES = 10L << 20;

  private static final ProcessExit TERMINATED =
      new ProcessExit(-1, 15, ProcessExit.Reason.TERMINATED, null);
  private static final ProcessExit KILLED =
      new ProcessExit(-1, 9, ProcessExit.Reason.SIGNALED, null);

  private final ProcessSpec spec;
  private final int pid;
  private final OutputLog log; // the real sessions' log: never blocks, so taken under lock too
  private final Consumer<FakeSession> onClose; // the manager's release of the id: once, unlocked
  private final List<String> calls = Collections.synchronizedList(new ArrayList<>());

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  // Written under lock; volatile so that the test's side reads them without it.
  private volatile ProcessExit exit;
  private volatile boolean closed;
  private final ByteArrayOutputStream stdin = new ByteArrayOutputStream(); // under lock
  private volatile boolean stdinClosed;
  private volatile int rows;
  private volatile int cols;
  // The test's scripting: set at any time, read by the session's calls.
  private volatile boolean ignoreTerminate;
  private volatile RuntimeException terminateFailure;
  private volatile RuntimeException closeFailure;
  private volatile Consumer<byte[]> onWrite;
  private volatile Runnable onCloseStdin;
  private volatile Consumer<ProcessSignal> onSignal;

  /**
   * A running session for {@code spec}: its id, whether it has a terminal and the terminal's size,
   * and the log's bound ({@code maxOutputBytes}) come from the spec; nothing is written yet.
   *
   * @param spec what the session runs; its id is the session's (empty when the spec has none: a
   *     manager resolves ids before it starts a session)
   * @param pid what {@link #pid()} reports
   */
  public FakeSession(ProcessSpec spec, int pid) {
    this(spec, pid, s -> {});
  }

  FakeSession(ProcessSpec spec, int pid, Consumer<FakeSession> onClose) {
    this.spec = Objects.requireNonNull(spec, "spec");
    this.pid = pid;
    this.onClose = onClose;
    long bound = spec.options().resources().maxOutputBytes();
    this.log = new OutputLog(bound > 0 ? bound : DEFAULT_MAX_LOG_BYTES);
    this.rows = spec.rows();
    this.cols = spec.cols();
  }

  // ---- the test's side: scripting the process ----

  /** The process writes {@code text} (UTF-8) to its stdout; see {@link #output}. */
  public FakeSession stdout(String text) {
    return output(ProcessStream.STDOUT, text.getBytes(StandardCharsets.UTF_8));
  }

  /** The process writes {@code data} to its stdout; see {@link #output}. */
  public FakeSession stdout(byte[] data) {
    return output(ProcessStream.STDOUT, data);
  }

  /** The process writes {@code text} (UTF-8) to its stderr; see {@link #output}. */
  public FakeSession stderr(String text) {
    return output(ProcessStream.STDERR, text.getBytes(StandardCharsets.UTF_8));
  }

  /** The process writes {@code data} to its stderr; see {@link #output}. */
  public FakeSession stderr(byte[] data) {
    return output(ProcessStream.STDERR, data);
  }

  /** The process writes {@code text} (UTF-8) to its terminal; see {@link #output}. */
  public FakeSession tty(String text) {
    return output(ProcessStream.TTY, text.getBytes(StandardCharsets.UTF_8));
  }

  /** The process writes {@code data} to its terminal; see {@link #output}. */
  public FakeSession tty(byte[] data) {
    return output(ProcessStream.TTY, data);
  }

  /**
   * Appends a copy of {@code data} to the log as one chunk on {@code stream}, drops the oldest
   * chunks beyond the bound, wakes blocked readers and sends an OUTPUT event to every watcher.
   * Empty data, and any data once the process has ended or the session is closed, is dropped.
   *
   * @throws IllegalArgumentException for a stream the session does not have: a terminal session
   *     writes {@link ProcessStream#TTY} only, a pipe session {@link ProcessStream#STDOUT} and
   *     {@link ProcessStream#STDERR}
   */
  public FakeSession output(ProcessStream stream, byte[] data) {
    Objects.requireNonNull(stream, "stream");
    Objects.requireNonNull(data, "data");
    if ((stream == ProcessStream.TTY) != spec.tty()) {
      throw new IllegalArgumentException(
          "a " + (spec.tty() ? "terminal" : "pipe") + " session has no " + stream + " output");
    }
    log.append(stream, data); // dropped once the log is finished or closed
    return this;
  }

  /** The process exits by itself with {@code code}; see {@link #exit(ProcessExit)}. */
  public FakeSession exit(int code) {
    return exit(ProcessExit.exited(code));
  }

  /**
   * The process ends as {@code end} says, after everything scripted so far: readers at the end of
   * the log get end of file, {@link #waitFor()} returns, watchers get an EXITED event. A process
   * ends once: a later end is ignored.
   */
  public FakeSession exit(ProcessExit end) {
    Objects.requireNonNull(end, "end");
    lock.lock();
    try {
      end(end);
    } finally {
      lock.unlock();
    }
    return this;
  }

  /** Under the lock: the first end counts. */
  private void end(ProcessExit end) {
    if (exit != null) {
      return;
    }
    log.finish(end); // first, as the real sessions: output complete before the exit is seen
    exit = end;
    changed.signalAll();
  }

  /**
   * From now on {@link #terminate()} is recorded but leaves the process running, as one that
   * outlives its kill would: the test ends it with {@link #exit}.
   */
  public FakeSession ignoreTerminate() {
    ignoreTerminate = true;
    return this;
  }

  /**
   * From now on {@link #terminate()} throws {@code failure} (after recording the call), leaving the
   * process as it is; null makes it work again.
   */
  public FakeSession failTerminate(RuntimeException failure) {
    terminateFailure = failure;
    return this;
  }

  /**
   * From now on {@link #close()} closes the session and then throws {@code failure}; null makes it
   * return normally again.
   */
  public FakeSession failClose(RuntimeException failure) {
    closeFailure = failure;
    return this;
  }

  /**
   * Runs {@code reaction} with a copy of the bytes of every accepted {@link #write}, on the
   * writer's thread after they were recorded, so that the test can answer like the program would
   * ({@code s.onWrite(s::stdout)} is {@code cat}); null for none.
   */
  public FakeSession onWrite(Consumer<byte[]> reaction) {
    onWrite = reaction;
    return this;
  }

  /**
   * Runs {@code reaction} after every accepted {@link #closeStdin()}, on the caller's thread (for
   * example {@code () -> s.exit(0)}, a program that ends at end of input); null for none.
   */
  public FakeSession onCloseStdin(Runnable reaction) {
    onCloseStdin = reaction;
    return this;
  }

  /**
   * Runs {@code reaction} after every accepted {@link #signal}, on the caller's thread (for example
   * one that ends the process as SIGINT would); null for none.
   */
  public FakeSession onSignal(Consumer<ProcessSignal> reaction) {
    onSignal = reaction;
    return this;
  }

  // ---- the test's side: what happened ----

  /**
   * The calls the code under test made, in order, each recorded as it was made (also when it then
   * failed): {@code read:AFTER:MAX}, {@code read:AFTER:MAX:TIMEOUT} (a {@link Duration} as {@code
   * PT0.5S}; the reads into a buffer go through these), {@code write:TEXT} (the bytes as UTF-8),
   * {@code closeStdin}, {@code resize:ROWSxCOLS}, {@code signal:interrupt}, {@code terminate},
   * {@code waitFor}, {@code waitFor:TIMEOUT}, {@code watch} and {@code close}. {@link #id()},
   * {@link #pid()}, {@link #exitValue()} and this class's own methods are not recorded.
   */
  public List<String> calls() {
    synchronized (calls) {
      return List.copyOf(calls);
    }
  }

  /** Every byte written to the process's stdin (its terminal's input), in order. */
  public byte[] stdin() {
    lock.lock();
    try {
      return stdin.toByteArray();
    } finally {
      lock.unlock();
    }
  }

  /** {@link #stdin()} as UTF-8 text. */
  public String stdinText() {
    return new String(stdin(), StandardCharsets.UTF_8);
  }

  /** Whether {@link #closeStdin()} was accepted (on a terminal: Ctrl-D was sent). */
  public boolean isStdinClosed() {
    return stdinClosed;
  }

  /** The terminal's rows: the spec's, or the last accepted {@link #resize}. */
  public int rows() {
    return rows;
  }

  /** The terminal's columns: the spec's, or the last accepted {@link #resize}. */
  public int cols() {
    return cols;
  }

  /** Whether {@link #close()} was called. */
  public boolean isClosed() {
    return closed;
  }

  /** The offset the next scripted byte gets: the number of bytes the process ever wrote. */
  public long nextSeq() {
    return log.nextSeq();
  }

  /** The offset of the first byte the log still holds; {@link #nextSeq()} when it holds none. */
  public long retainedFrom() {
    return log.retainedFrom();
  }

  /** The spec the session was made for (as a manager started it: with its resolved id). */
  public ProcessSpec spec() {
    return spec;
  }

  /**
   * This session seen as a plain {@link ProcessSession}: a view that is neither a {@link
   * ProcessSignaler} nor a {@link ProcessEventSource}, whose calls are this session's (and recorded
   * here).
   */
  public ProcessSession asPlainSession() {
    return new Plain(this);
  }

  // ---- the session ----

  @Override
  public String id() {
    return spec.id();
  }

  @Override
  public int pid() {
    return pid;
  }

  /**
   * Records {@code read:afterSeq:maxBytes}, with {@code :timeout} after it unless the read waits
   * without one (the reads without a timeout pass {@link ChronoUnit#FOREVER}).
   */
  @Override
  public ProcessOutput read(long afterSeq, int maxBytes, Duration timeout)
      throws InterruptedException {
    boolean forever = timeout.equals(ChronoUnit.FOREVER.getDuration());
    calls.add("read:" + afterSeq + ":" + maxBytes + (forever ? "" : ":" + timeout));
    ensureOpen(); // as the real sessions: closed first, then the log checks again
    return log.read(afterSeq, maxBytes, Deadlines.fromNow(timeout));
  }

  /**
   * Records the bytes as the process's input and runs the {@link #onWrite} reaction. Empty (or
   * null) data returns at once.
   *
   * @throws SandboxException INTERNAL when the process no longer reads: it has ended, or (pipes)
   *     its stdin was closed
   * @throws ProcessClosedException when the session is closed
   */
  @Override
  public void write(byte[] data) throws InterruptedException {
    calls.add("write:" + (data == null ? "" : new String(data, StandardCharsets.UTF_8)));
    Consumer<byte[]> reaction;
    lock.lock();
    try {
      ensureOpen();
      if (data == null || data.length == 0) {
        return;
      }
      if (exit != null || (stdinClosed && !spec.tty())) {
        throw SandboxException.of(
            SandboxException.Kind.INTERNAL,
            "process write: "
                + (exit != null ? "the process has ended" : "its stdin is closed")
                + " (fake)");
      }
      stdin.write(data, 0, data.length);
      reaction = onWrite;
    } finally {
      lock.unlock();
    }
    if (reaction != null) {
      reaction.accept(data.clone());
    }
  }

  /**
   * Records that stdin was closed (on a terminal, that Ctrl-D was sent: the terminal stays
   * writable) and runs the {@link #onCloseStdin} reaction.
   *
   * @throws ProcessClosedException when the session is closed
   */
  @Override
  public void closeStdin() {
    calls.add("closeStdin");
    Runnable reaction;
    lock.lock();
    try {
      ensureOpen();
      stdinClosed = true;
      reaction = onCloseStdin;
    } finally {
      lock.unlock();
    }
    if (reaction != null) {
      reaction.run();
    }
  }

  /**
   * Records the terminal's new size.
   *
   * @throws SandboxException VALIDATION when a dimension is not positive (checked first);
   *     NOT_AVAILABLE for a pipe session
   * @throws ProcessClosedException when the session is closed
   */
  @Override
  public void resize(int rows, int cols) {
    calls.add("resize:" + rows + "x" + cols);
    if (rows <= 0 || cols <= 0) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "Resize rows and cols must be positive (got " + rows + "x" + cols + ")");
    }
    lock.lock();
    try {
      ensureOpen();
      if (!spec.tty()) {
        throw SandboxException.of(
            SandboxException.Kind.NOT_AVAILABLE, "Resize requires a TTY session");
      }
      this.rows = rows;
      this.cols = cols;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Ends the process as TERMINATED (signal 15), unless it has ended already, {@link
   * #ignoreTerminate()} was called or {@link #failTerminate} set a failure (thrown).
   *
   * @throws ProcessClosedException when the session is closed
   */
  @Override
  public void terminate() {
    calls.add("terminate");
    lock.lock();
    try {
      ensureOpen();
      if (terminateFailure != null) {
        throw terminateFailure;
      }
      if (!ignoreTerminate) {
        end(TERMINATED);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Records the signal and runs the {@link #onSignal} reaction; the process goes on running unless
   * the reaction ends it.
   *
   * @throws SandboxException NOT_AVAILABLE for a signal other than {@link ProcessSignal#INTERRUPT}
   * @throws ProcessClosedException when the session is closed or the process has ended
   */
  @Override
  public void signal(ProcessSignal signal) {
    calls.add("signal:" + signal);
    if (signal != ProcessSignal.INTERRUPT) {
      throw SandboxException.of(
          SandboxException.Kind.NOT_AVAILABLE, "signal " + signal + " not supported");
    }
    Consumer<ProcessSignal> reaction;
    lock.lock();
    try {
      ensureOpen();
      if (exit != null) {
        throw new ProcessClosedException();
      }
      reaction = onSignal;
    } finally {
      lock.unlock();
    }
    if (reaction != null) {
      reaction.accept(signal);
    }
  }

  @Override
  public ProcessExit waitFor() throws InterruptedException {
    calls.add("waitFor");
    lock.lock();
    try {
      while (exit == null) {
        changed.await();
      }
      return exit;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Optional<ProcessExit> waitFor(Duration timeout) throws InterruptedException {
    calls.add("waitFor:" + timeout);
    long deadline = Deadlines.fromNow(timeout);
    lock.lock();
    try {
      while (exit == null) {
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        changed.awaitNanos(left);
      }
      return Optional.ofNullable(exit);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Optional<ProcessExit> exitValue() {
    return Optional.ofNullable(exit);
  }

  /**
   * A new watcher: the retained output replayed as OUTPUT events (then EXITED if the process has
   * ended), then live events; a single LAG event from {@link #retainedFrom()} when more than 256
   * events would have to be replayed.
   *
   * @throws ProcessClosedException when the session is closed
   */
  @Override
  public EventStream watch() {
    calls.add("watch");
    ensureOpen();
    return log.watch();
  }

  /**
   * Ends a running process as SIGNALED (signal 9), as the real close kills the tree, then closes
   * the session: watchers get a CLOSED event, blocked and later reads throw {@link
   * ProcessClosedException}, and the manager that started it (if any) releases its id. Only the
   * first call does that; every call is recorded, and throws the failure {@link #failClose} set.
   */
  @Override
  public void close() {
    calls.add("close");
    boolean first;
    RuntimeException failure;
    lock.lock();
    try {
      first = !closed;
      if (first) {
        // One step, so that a reader blocked at the end sees the close and not the end of output.
        log.finishAndClose(KILLED);
        exit = exit == null ? KILLED : exit;
        closed = true;
        changed.signalAll();
      }
      failure = closeFailure;
    } finally {
      lock.unlock();
    }
    if (first) {
      onClose.accept(this);
    }
    if (failure != null) {
      throw failure;
    }
  }

  private void ensureOpen() {
    if (closed) {
      throw new ProcessClosedException();
    }
  }

  @Override
  public String toString() {
    return "FakeSession[" + spec.id() + ", " + spec.argv().get(0) + "]";
  }

  /** {@link #asPlainSession()}: the session without its optional capabilities. */
  private static final class Plain extends ForwardingProcessSession {
    Plain(FakeSession session) {
      super(session);
    }
  }
}
