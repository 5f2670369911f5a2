package dev.confine.host;

import dev.confine.SandboxException;
import dev.confine.session.EventStream;
import dev.confine.session.ForwardingProcessSession;
import dev.confine.session.ProcessEventSource;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessInfo;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSignal;
import dev.confine.session.ProcessSignaler;
import dev.confine.session.ProcessSpec;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bookkeeping every session backend shares: it reserves ids, remembers what was started and
 * when, lists and terminates sessions, and hands out handles whose {@link ProcessSession#close()}
 * releases the id. The backend only supplies a {@link Starter} that spawns one session.
 *
 * <p>Starting reserves the id before the starter runs, so two concurrent starts with the same id
 * cannot both spawn a process: one wins, the other fails with CONFLICT. An id stays reserved until
 * its handle is closed, even after the process ended, so a client can still read the output of an
 * ended session by id.
 *
 * <p>Whether a session runs is read from its {@link ProcessSession#exitValue()} when asked; the
 * registry starts no thread per session. Thread-safe.
 */
public final class ProcessRegistry implements ProcessManager {
  /** How long {@link #terminate(String)} waits for the process to end after terminating it. */
  private static final Duration TERMINATE_WAIT = Duration.ofSeconds(10);

  /** Spawns one session; the backend's part of {@link ProcessManager#start}. */
  @FunctionalInterface
  public interface Starter {
    /**
     * Starts a session for {@code spec}, whose id is already resolved (non-empty) and reserved.
     *
     * @return the started session, never null
     * @throws SandboxException when the session cannot be started; it reaches the caller of {@link
     *     ProcessRegistry#start} as it is
     */
    ProcessSession start(ProcessSpec spec);
  }

  private final Starter starter;
  private final InstantSource clock;
  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

  /**
   * A registry that spawns sessions with {@code starter}.
   *
   * @param starter the backend's spawn function; null makes every {@link #start} fail with
   *     NOT_AVAILABLE (a backend that has no sessions on this platform)
   */
  public ProcessRegistry(Starter starter) {
    this(starter, InstantSource.system());
  }

  /** As {@link #ProcessRegistry(Starter)}, reading start times from {@code clock} (tests). */
  ProcessRegistry(Starter starter, InstantSource clock) {
    this.starter = starter;
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * Reserves the spec's id (or a new one from {@link #newId()} when it has none), then starts the
   * session with the starter. The returned handle's {@link ProcessSession#id()} is the resolved id;
   * closing it closes the session and releases the id.
   *
   * @throws SandboxException NOT_AVAILABLE when there is no starter; CONFLICT when the id is
   *     reserved by a session that is not closed; INTERNAL when the starter returned no session;
   *     the starter's own failure as it is (the id is then released)
   */
  @Override
  public ProcessSession start(ProcessSpec spec) {
    Objects.requireNonNull(spec, "spec");
    if (starter == null) {
      throw SandboxException.of(
          SandboxException.Kind.NOT_AVAILABLE, "process starter not configured");
    }
    String id = spec.id().isEmpty() ? newId() : spec.id();
    // Taken before spawning: the time the start was requested, which orders list().
    Entry entry = new Entry(id, spec.argv(), spec.tty(), clock.instant());
    if (entries.putIfAbsent(id, entry) != null) {
      throw SandboxException.of(
          SandboxException.Kind.CONFLICT,
          "process id " + SandboxException.quote(id) + " already exists");
    }
    ProcessSession session;
    try {
      session = starter.start(spec.withId(id));
    } catch (Throwable t) {
      // remove(key, value): only this start's reservation, whatever happened to the id meanwhile.
      entries.remove(id, entry);
      throw t;
    }
    if (session == null) {
      entries.remove(id, entry);
      throw SandboxException.of(
          SandboxException.Kind.INTERNAL,
          "process starter returned no session for " + SandboxException.quote(id));
    }
    entry.started(session);
    return new Handle(entry, session);
  }

  /**
   * A snapshot of the sessions not closed yet, oldest start first (ties by id). A session still
   * being spawned shows pid 0 and running.
   */
  @Override
  public List<ProcessInfo> list() {
    List<ProcessInfo> infos = new ArrayList<>();
    for (Entry e : entries.values()) {
      infos.add(e.info());
    }
    infos.sort(Comparator.comparing(ProcessInfo::startedAt).thenComparing(ProcessInfo::id));
    return List.copyOf(infos);
  }

  /**
   * Terminates session {@code id} (see {@link ProcessSession#terminate()}) and waits up to 10 s for
   * it to end; returns at once when it had already ended. An interrupt while waiting returns early
   * with the thread's interrupt status set.
   *
   * @throws SandboxException NOT_FOUND for an id that is not reserved; NOT_AVAILABLE while the
   *     session is still being spawned; the session's own failure to terminate as it is
   */
  @Override
  public void terminate(String id) {
    Entry entry = id == null ? null : entries.get(id);
    if (entry == null) {
      throw SandboxException.of(
          SandboxException.Kind.NOT_FOUND, "unknown process id " + SandboxException.quote(id));
    }
    ProcessSession session = entry.session;
    if (session == null) {
      throw SandboxException.of(
          SandboxException.Kind.NOT_AVAILABLE,
          "process " + SandboxException.quote(id) + " is still starting");
    }
    if (session.exitValue().isPresent()) {
      return;
    }
    session.terminate();
    try {
      // Bounded: the caller asked for the process to end, not to hang on one that will not.
      session.waitFor(TERMINATE_WAIT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * A new session id: 20 lower-case characters of base32hex ({@code 0-9a-v}) encoding 12 bytes in
   * the layout of xid: 4 bytes of seconds since the epoch, 5 bytes drawn at random once per JVM and
   * a 3-byte counter. Ids are unique within the JVM and, across JVMs, with overwhelming
   * probability. Within one JVM an id sorts after every id made before it, also when the clock
   * steps back or more than 2^24 ids are made in one second (the seconds field then runs ahead of
   * the clock).
   */
  public static String newId() {
    long now = Instant.now().getEpochSecond() & 0xFFFF_FFFFL;
    long stamp = ID_STAMP.updateAndGet(prev -> Math.max(prev + 1, now << 24));
    byte[] raw = new byte[12];
    long seconds = stamp >>> 24;
    raw[0] = (byte) (seconds >>> 24);
    raw[1] = (byte) (seconds >>> 16);
    raw[2] = (byte) (seconds >>> 8);
    raw[3] = (byte) seconds;
    System.arraycopy(ID_PROCESS, 0, raw, 4, ID_PROCESS.length);
    raw[9] = (byte) (stamp >>> 16);
    raw[10] = (byte) (stamp >>> 8);
    raw[11] = (byte) stamp;
    return base32Hex(raw);
  }

  private static final char[] BASE32_HEX = "0123456789abcdefghijklmnopqrstuv".toCharArray();

  /** The per-JVM middle of every id; xid uses a machine id and a pid, random serves as well. */
  private static final byte[] ID_PROCESS = new byte[5];

  /** Seconds (high bits) and counter (low 24 bits) of the last id, as one number to keep order. */
  private static final AtomicLong ID_STAMP = new AtomicLong();

  static {
    new SecureRandom().nextBytes(ID_PROCESS);
  }

  /** Unpadded base32hex: 96 bits become 20 characters, the last carrying one bit. */
  private static String base32Hex(byte[] raw) {
    StringBuilder b = new StringBuilder(20);
    int buffer = 0;
    int bits = 0;
    for (byte x : raw) {
      buffer = (buffer << 8) | (x & 0xFF);
      bits += 8;
      while (bits >= 5) {
        b.append(BASE32_HEX[(buffer >>> (bits - 5)) & 0x1F]);
        bits -= 5;
      }
    }
    if (bits > 0) {
      b.append(BASE32_HEX[(buffer << (5 - bits)) & 0x1F]);
    }
    return b.toString();
  }

  /** One reserved id: what was asked for, and the session once the starter returned it. */
  private static final class Entry {
    final String id;
    final List<String> argv;
    final boolean tty;
    final Instant startedAt;
    // Null while the starter runs; written once, read by list() and terminate() on other threads.
    volatile ProcessSession session;
    volatile int pid;

    Entry(String id, List<String> argv, boolean tty, Instant startedAt) {
      this.id = id;
      this.argv = argv;
      this.tty = tty;
      this.startedAt = startedAt;
    }

    void started(ProcessSession s) {
      pid = s.pid();
      session = s;
    }

    ProcessInfo info() {
      ProcessSession s = session;
      if (s == null) {
        return new ProcessInfo(id, argv, tty, 0, startedAt, true, null);
      }
      ProcessExit exit = s.exitValue().orElse(null);
      return new ProcessInfo(id, argv, tty, pid, startedAt, exit == null, exit);
    }
  }

  /**
   * The handle {@link #start} returns: the session under its resolved id, with both optional
   * capabilities always present (refusing when the session lacks them), and a close that releases
   * the id.
   */
  private final class Handle extends ForwardingProcessSession
      implements ProcessSignaler, ProcessEventSource {
    private final Entry entry;
    private final AtomicBoolean closed = new AtomicBoolean();

    Handle(Entry entry, ProcessSession inner) {
      super(inner);
      this.entry = entry;
    }

    @Override
    public String id() {
      return entry.id;
    }

    /**
     * Sends {@code signal} through the session.
     *
     * @throws SandboxException NOT_AVAILABLE when the session cannot be signalled
     */
    @Override
    public void signal(ProcessSignal signal) {
      if (!(delegate() instanceof ProcessSignaler s)) {
        throw SandboxException.of(
            SandboxException.Kind.NOT_AVAILABLE, "process does not support signals");
      }
      s.signal(signal);
    }

    /**
     * Watches the session's events.
     *
     * @throws SandboxException NOT_AVAILABLE when the session has no event stream
     */
    @Override
    public EventStream watch() {
      if (!(delegate() instanceof ProcessEventSource s)) {
        throw SandboxException.of(
            SandboxException.Kind.NOT_AVAILABLE, "process does not support event streams");
      }
      return s.watch();
    }

    /**
     * Closes the session, then releases its id. Only the first call does anything; later calls
     * return at once.
     */
    @Override
    public void close() {
      if (!closed.compareAndSet(false, true)) {
        return;
      }
      try {
        super.close();
      } finally {
        // The entry, not just the id: after the first close a new session may hold the same id.
        entries.remove(entry.id, entry);
      }
    }

    @Override
    public String toString() {
      return "ProcessSession[" + entry.id + "]";
    }
  }
}
