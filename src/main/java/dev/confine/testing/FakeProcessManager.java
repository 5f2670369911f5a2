package dev.confine.testing;

import dev.confine.Enforcement;
import dev.confine.EnforcementReporter;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.session.ProcessInfo;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A {@link ProcessManager} that runs nothing, for your own tests: it records every spec it is asked
 * to start and answers each start with a {@link FakeSession} (or a scripted failure), which the
 * test then scripts and inspects. Thread-safe.
 *
 * <p>It keeps the managers' contract: a spec without an id gets one ({@code fake-1}, {@code
 * fake-2}, ...); an id stays taken until its session is closed, even after the process ended, and a
 * start with a taken id fails with CONFLICT; {@link #list()} reports the open sessions, oldest
 * first; {@link #terminate(String)} terminates one and waits up to 10 s for it to end. The n-th
 * session started has pid 1000 + n.
 *
 * <p>Each start runs a script on its new session before returning it: the next one queued by {@link
 * #enqueue}, or else the one set by {@link #onEveryStart} (by default none: the session runs until
 * the test or the code under test ends it). A failure queued by {@link #enqueueFailure} is thrown
 * by one start instead.
 *
 * <pre>{@code
 * FakeProcessManager manager = new FakeProcessManager();
 * manager.enqueue(s -> s.stdout("hello\n").exit(0));
 * ProcessSession s = manager.start(ProcessSpec.pipes(List.of("echo", "hello")));
 * assertEquals(List.of("echo", "hello"), manager.lastSpec().argv());
 * }</pre>
 *
 * <p>Code that takes a {@link Runner} and finds its sessions with {@link ProcessManager#of} can be
 * given {@link #runner(FakeRunner)}.
 */
public final class FakeProcessManager implements ProcessManager {
  /** How long {@link #terminate(String)} waits for the process to end, as the real managers. */
  private static final Duration TERMINATE_WAIT = Duration.ofSeconds(10);

  private static final Consumer<FakeSession> NOTHING = s -> {};

  /** An open session and when it was started. */
  private record Open(FakeSession session, Instant startedAt) {}

  private final Deque<Object> script = new ArrayDeque<>(); // Consumer or RuntimeException
  private Consumer<? super FakeSession> everyStart = NOTHING;
  private final List<ProcessSpec> specs = new ArrayList<>();
  private final List<FakeSession> sessions = new ArrayList<>();
  private final List<String> terminated = new ArrayList<>();
  private final Map<String, Open> open = new HashMap<>();
  private int generatedIds;

  /** A manager with an empty script, whose sessions run until they are ended. */
  public FakeProcessManager() {}

  /** Queues {@code script} to run on the session of one start, before that start returns it. */
  public synchronized FakeProcessManager enqueue(Consumer<? super FakeSession> script) {
    this.script.add(Objects.requireNonNull(script, "script"));
    return this;
  }

  /** Queues {@code failure} to be thrown by one start (which records the spec, nothing else). */
  public synchronized FakeProcessManager enqueueFailure(RuntimeException failure) {
    script.add(Objects.requireNonNull(failure, "failure"));
    return this;
  }

  /** Runs {@code script} on the session of every start beyond the queue. */
  public synchronized FakeProcessManager onEveryStart(Consumer<? super FakeSession> script) {
    this.everyStart = Objects.requireNonNull(script, "script");
    return this;
  }

  /**
   * Records {@code spec}, then starts a {@link FakeSession} for it (with its id resolved) and runs
   * the next script on it; the session is listed from then until it is closed.
   *
   * @throws SandboxException CONFLICT when an open session has the spec's id (the queue is left as
   *     it is, as a real manager refuses before its backend starts anything)
   * @throws RuntimeException the next queued failure, as it is; or what the script threw (the
   *     session is then closed)
   */
  @Override
  public FakeSession start(ProcessSpec spec) {
    Objects.requireNonNull(spec, "spec");
    FakeSession session;
    Consumer<? super FakeSession> run;
    synchronized (this) {
      specs.add(spec);
      String id = spec.id();
      if (id.isEmpty()) {
        do {
          id = "fake-" + ++generatedIds;
        } while (open.containsKey(id));
      } else if (open.containsKey(id)) {
        throw SandboxException.of(
            SandboxException.Kind.CONFLICT,
            "process id " + SandboxException.quote(id) + " already exists");
      }
      Object next = script.poll();
      if (next instanceof RuntimeException failure) {
        throw failure;
      }
      @SuppressWarnings("unchecked") // only enqueue adds other elements
      Consumer<? super FakeSession> queued = (Consumer<? super FakeSession>) next;
      run = queued != null ? queued : everyStart;
      session = new FakeSession(spec.withId(id), 1000 + sessions.size() + 1, this::release);
      open.put(id, new Open(session, Instant.now()));
      sessions.add(session);
    }
    try {
      run.accept(session);
    } catch (RuntimeException | Error e) {
      session.close();
      throw e;
    }
    return session;
  }

  /** A session's first close: its id is free again (unless a new session took it since). */
  private synchronized void release(FakeSession session) {
    Open entry = open.get(session.id());
    if (entry != null && entry.session() == session) {
      open.remove(session.id());
    }
  }

  /** The open sessions, oldest first (ties by id). */
  @Override
  public List<ProcessInfo> list() {
    List<Open> entries;
    synchronized (this) {
      entries = new ArrayList<>(open.values());
    }
    entries.sort(Comparator.comparing(Open::startedAt).thenComparing(e -> e.session().id()));
    List<ProcessInfo> infos = new ArrayList<>(entries.size());
    for (Open e : entries) {
      FakeSession s = e.session();
      var exit = s.exitValue().orElse(null);
      infos.add(
          new ProcessInfo(
              s.id(), s.spec().argv(), s.spec().tty(), s.pid(), e.startedAt(), exit == null, exit));
    }
    return List.copyOf(infos);
  }

  /**
   * Records {@code id}, then terminates its session ({@link FakeSession#terminate()}) and waits up
   * to 10 s for it to end; an ended session is left as it is. An interrupt while waiting returns
   * early with the thread's interrupt status set.
   *
   * @throws SandboxException NOT_FOUND for an id no open session has; the session's own failure to
   *     terminate as it is
   */
  @Override
  public void terminate(String id) {
    FakeSession session;
    synchronized (this) {
      terminated.add(id);
      Open entry = id == null ? null : open.get(id);
      if (entry == null) {
        throw SandboxException.of(
            SandboxException.Kind.NOT_FOUND, "unknown process id " + SandboxException.quote(id));
      }
      session = entry.session();
    }
    if (session.exitValue().isPresent()) {
      return;
    }
    session.terminate();
    try {
      session.waitFor(TERMINATE_WAIT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Every spec {@link #start} was called with, as it was passed, refused ones included. */
  public synchronized List<ProcessSpec> specs() {
    return List.copyOf(specs);
  }

  /**
   * The spec of the most recent start.
   *
   * @throws IllegalStateException when there was none
   */
  public synchronized ProcessSpec lastSpec() {
    return Recorded.last(specs, "FakeProcessManager was asked to start nothing");
  }

  /** Every session started, in order, closed ones included. */
  public synchronized List<FakeSession> sessions() {
    return List.copyOf(sessions);
  }

  /**
   * The most recent session started.
   *
   * @throws IllegalStateException when none was
   */
  public synchronized FakeSession lastSession() {
    return Recorded.last(sessions, "FakeProcessManager started no session");
  }

  /**
   * The most recent session started with id {@code id}, open or closed.
   *
   * @throws IllegalStateException when none was
   */
  public synchronized FakeSession session(String id) {
    for (int i = sessions.size() - 1; i >= 0; i--) {
      if (sessions.get(i).id().equals(id)) {
        return sessions.get(i);
      }
    }
    throw new IllegalStateException(
        "FakeProcessManager started no session " + SandboxException.quote(id));
  }

  /**
   * Every id {@link #terminate(String)} was called with, in order, unknown ones (and null)
   * included.
   */
  public synchronized List<String> terminated() {
    return Collections.unmodifiableList(new ArrayList<>(terminated)); // a null id is recorded too
  }

  /** How many scripted starts (scripts and failures) are still queued. */
  public synchronized int pending() {
    return script.size();
  }

  /**
   * A backend for code that takes a {@link Runner}: its {@code exec} goes to {@code execs} (as do
   * its {@link Enforcement} reports), and it is a {@link ProcessManager} whose starts, lists and
   * terminations are this manager's, so that {@link ProcessManager#of} finds it, alone or under any
   * decorator of {@code dev.confine.Runners}.
   */
  public Runner runner(FakeRunner execs) {
    return new Backend(Objects.requireNonNull(execs, "execs"), this);
  }

  @Override
  public synchronized String toString() {
    return "FakeProcessManager[started=" + sessions.size() + ", open=" + open.size() + "]";
  }

  /** {@link #runner(FakeRunner)}. */
  private record Backend(FakeRunner execs, FakeProcessManager sessions)
      implements Runner, ProcessManager, EnforcementReporter {
    @Override
    public ExecResult exec(String command, List<String> args, ExecOptions options) {
      return execs.exec(command, args, options);
    }

    @Override
    public FakeSession start(ProcessSpec spec) {
      return sessions.start(spec);
    }

    @Override
    public List<ProcessInfo> list() {
      return sessions.list();
    }

    @Override
    public void terminate(String id) {
      sessions.terminate(id);
    }

    @Override
    public Enforcement enforcement() {
      return execs.enforcement();
    }

    @Override
    public String toString() {
      return "FakeProcessManager.runner[" + sessions + "]";
    }
  }
}
