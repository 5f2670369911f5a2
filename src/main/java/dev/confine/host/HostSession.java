package dev.confine.host;

import dev.confine.ExecRequest;
import dev.confine.ProcessClosedException;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.Engine;
import dev.confine.linux.child.ChildOutcome;
import dev.confine.linux.child.SessionInput;
import dev.confine.linux.child.SessionProcess;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.WorkDirectory;
import dev.confine.linux.sys.EngineException;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.session.EventStream;
import dev.confine.session.OutputRead;
import dev.confine.session.ProcessEventSource;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSignal;
import dev.confine.session.ProcessSignaler;
import dev.confine.session.ProcessSpec;
import dev.confine.session.ProcessStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A session on the engine: a {@link SessionProcess} whose output goes to an {@link OutputLog}.
 * Shared by the runners that run host processes ({@code LocalRunner}, {@code ConfinedRunner}).
 */
public final class HostSession
    implements ProcessSession, ProcessSignaler, ProcessEventSource, SessionProcess.Listener {
  /** How long terminate waits after SIGTERM before it kills the tree. */
  public static final Duration TERMINATE_GRACE = Duration.ofSeconds(2);

  // SIGKILL lands at once; only a task stuck in the kernel takes longer to be reaped.
  private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);
  private static final ProcessStream[] STREAMS = {
    ProcessStream.STDOUT, ProcessStream.STDERR, ProcessStream.TTY
  };

  private final String id;
  private final String command;
  private final Duration timeout;
  private final OutputLog log;
  private final Runnable onClose;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile boolean terminated;
  private volatile ProcessExit exit;
  private SessionProcess process;

  private HostSession(
      String id, String command, Duration timeout, long maxLogBytes, Runnable onClose) {
    this.id = id;
    this.onClose = onClose;
    this.command = command;
    this.timeout = timeout;
    this.log = new OutputLog(maxLogBytes);
  }

  /** What a session spec asks for, as the policies and checks of an exec see it. */
  public static ExecRequest request(ProcessSpec spec) {
    List<String> argv = spec.argv();
    return new ExecRequest(argv.get(0), argv.subList(1, argv.size()), spec.options(), spec.tty());
  }

  /**
   * Starts the session {@code spec} describes: its program (looked up as an exec's is) in {@code
   * workDir} with the environment {@code env}, under {@code guard}, its timeout from the spec's
   * options, its output log bounded by {@code maxLogBytes}.
   *
   * @param onClose runs once the session is closed and its tree is gone (not when the start fails)
   * @throws SandboxException classified as an exec's spawn failure
   */
  public static HostSession start(
      ProcessSpec spec,
      WorkDir workDir,
      List<String> env,
      TreeGuard guard,
      long maxLogBytes,
      Runnable onClose) {
    String command = spec.argv().get(0);
    Duration timeout = spec.options().timeout();
    HostSession session = new HostSession(spec.id(), command, timeout, maxLogBytes, onClose);
    HostExec.Program program = HostExec.program(workDir, command, guard);
    // The spawn is over when SessionProcess.start returns: the directory can go then.
    try (WorkDirectory dir = program.dir()) {
      SpawnSpec spawn = new SpawnSpec(program.executable(), spec.argv(), env, dir, true);
      session.process =
          Engine.startSession(
              spawn,
              spec.tty(),
              spec.rows(),
              spec.cols(),
              guard,
              timeout.isZero() ? 0 : saturatedNanos(timeout),
              session);
      // A platform thread blocked in read pulls the output itself, with no hop through the loop.
      SessionProcess process = session.process;
      session.log.puller(
          deadline ->
              switch (process.readOnCaller(deadline)) {
                case SOME -> OutputLog.Pulled.SOME;
                case BUSY -> OutputLog.Pulled.BUSY;
                case NONE -> OutputLog.Pulled.NONE;
              });
    } catch (ErrnoException e) {
      throw HostExec.spawnFailure(command, e);
    } catch (EngineException e) {
      throw SandboxException.of(Kind.INTERNAL, "exec " + command + ": " + e.getMessage(), e);
    }
    return session;
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE / 2;
    }
  }

  @Override
  public long output(int stream, SessionProcess.Source source, ByteBuffer buffer, int maxReads) {
    return log.appendFrom(STREAMS[stream], source::read, buffer, maxReads);
  }

  @Override
  public void ended(ChildOutcome end) {
    ProcessExit e = classify(end);
    exit = e;
    log.finish(e);
  }

  private ProcessExit classify(ChildOutcome end) {
    SandboxException failure =
        Outcomes.failure(
            end, Outcomes.Subject.SESSION, command, timeout, Outcomes.Extras.NONE, null);
    if (failure != null) {
      return new ProcessExit(-1, 0, reason(failure.kind()), failure);
    }
    if (end.exit().signaled()) {
      return new ProcessExit(
          -1,
          end.exit().signal(),
          terminated ? ProcessExit.Reason.TERMINATED : ProcessExit.Reason.SIGNALED,
          null);
    }
    return ProcessExit.exited(end.exit().code());
  }

  /** How a session's exit reports the error its child ended in. */
  private static ProcessExit.Reason reason(Kind kind) {
    return switch (kind) {
      case NOT_AVAILABLE -> ProcessExit.Reason.UNENFORCEABLE;
      case BUDGET_EXCEEDED -> ProcessExit.Reason.BUDGET_EXCEEDED;
      case TIMEOUT -> ProcessExit.Reason.TIMED_OUT;
      default -> ProcessExit.Reason.EXITED; // a child that could not be reaped
    };
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public int pid() {
    return process.pid();
  }

  @Override
  public ProcessOutput read(long afterSeq, int maxBytes, Duration timeout)
      throws InterruptedException {
    long deadline = Deadlines.fromNow(timeout);
    return whileOpen(() -> log.read(afterSeq, maxBytes, deadline));
  }

  @Override
  public OutputRead read(long afterSeq, ByteBuffer into, Duration timeout)
      throws InterruptedException {
    long deadline = Deadlines.fromNow(timeout);
    return whileOpen(() -> log.read(afterSeq, into, deadline));
  }

  /** A read of the log that may wait. */
  @FunctionalInterface
  private interface LogRead<T> {
    T read() throws InterruptedException;
  }

  private <T> T whileOpen(LogRead<T> read) throws InterruptedException {
    ensureOpen();
    T out = read.read();
    // A close while this read waited ends the process first, which finishes the log: the reader
    // must still learn that the session is closed, not take the kill for an ordinary end.
    ensureOpen();
    return out;
  }

  @Override
  public void write(byte[] data) throws InterruptedException {
    ensureOpen();
    if (data == null || data.length == 0) {
      return;
    }
    try {
      process.input().write(data);
    } catch (ErrnoException e) {
      throw SandboxException.of(Kind.INTERNAL, "process write: " + e.getMessage(), e);
    }
  }

  @Override
  public void closeStdin() {
    ensureOpen();
    if (process.tty()) {
      type(SessionInput.Control.EOF, "process write");
    } else {
      process.input().close();
    }
  }

  @Override
  public void resize(int rows, int cols) {
    if (rows <= 0 || cols <= 0) {
      throw SandboxException.of(
          Kind.VALIDATION, "Resize rows and cols must be positive (got " + rows + "x" + cols + ")");
    }
    ensureOpen();
    if (!process.tty()) {
      throw SandboxException.of(Kind.NOT_AVAILABLE, "Resize requires a TTY session");
    }
    try {
      process.input().resize(rows, cols);
    } catch (ErrnoException e) {
      throw SandboxException.of(Kind.INTERNAL, "process resize: " + e.getMessage(), e);
    }
  }

  @Override
  public void terminate() {
    ensureOpen();
    if (exit != null) {
      return;
    }
    terminated = true;
    process.terminateGroup();
    try {
      if (process.awaitEnd(System.nanoTime() + TERMINATE_GRACE.toNanos()) == null) {
        process.killTree();
      }
    } catch (InterruptedException e) {
      process.killTree();
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void signal(ProcessSignal signal) {
    if (signal != ProcessSignal.INTERRUPT) {
      throw SandboxException.of(Kind.NOT_AVAILABLE, "signal " + signal + " not supported");
    }
    ensureOpen();
    if (exit != null) {
      throw new ProcessClosedException();
    }
    if (process.tty()) {
      type(SessionInput.Control.INTERRUPT, "process interrupt");
    } else if (!process.interruptGroup()) {
      throw new ProcessClosedException();
    }
  }

  /**
   * Types {@code control} into the terminal; an interrupt while the terminal is full stops the wait
   * and stays set.
   *
   * @throws SandboxException INTERNAL, naming {@code call}, when the terminal cannot be written
   */
  private void type(SessionInput.Control control, String call) {
    try {
      process.input().type(control);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ErrnoException e) {
      throw SandboxException.of(Kind.INTERNAL, call + ": " + e.getMessage(), e);
    }
  }

  @Override
  public ProcessExit waitFor() throws InterruptedException {
    process.awaitEnd(Long.MAX_VALUE);
    return exit;
  }

  @Override
  public Optional<ProcessExit> waitFor(Duration timeout) throws InterruptedException {
    process.awaitEnd(Deadlines.fromNow(timeout));
    return Optional.ofNullable(exit);
  }

  @Override
  public Optional<ProcessExit> exitValue() {
    return Optional.ofNullable(exit);
  }

  @Override
  public EventStream watch() {
    ensureOpen();
    return log.watch();
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    if (process.end() == null) {
      process.killTree();
      boolean interrupted = false;
      long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
      while (true) {
        try {
          process.awaitEnd(deadline);
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    process.input().close();
    log.close();
    onClose.run();
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new ProcessClosedException();
    }
  }

  @Override
  public String toString() {
    return "HostSession[" + id + ", " + command + "]";
  }
}
