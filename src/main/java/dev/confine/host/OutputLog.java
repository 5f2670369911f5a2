package dev.confine.host;

import dev.confine.ProcessClosedException;
import dev.confine.SandboxException;
import dev.confine.SequenceGapException;
import dev.confine.session.EventStream;
import dev.confine.session.OutputChunk;
import dev.confine.session.OutputRead;
import dev.confine.session.ProcessEvent;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The output of one process session, for backends that implement {@link ProcessSession}: an
 * append-only log of byte chunks addressed by byte offset ("seq": 0 is the first byte the child
 * ever wrote), bounded by dropping whole chunks from the front, read from any retained offset and
 * watched as events.
 *
 * <p>The backend appends each read of the child's pipes or terminal as one chunk ({@link
 * #appendFrom}, or {@link #append} for bytes it already holds), {@link #finish finishes} the log
 * once the child has exited and every byte it wrote was appended, and {@link #close closes} it when
 * the session is closed; the session's {@code read} and {@code watch} delegate here. Appends,
 * {@code finish} and {@code close} never block on readers or watchers (they hold the log's lock
 * only briefly), so the thread that pumps the child's output is never held up by a slow client.
 * Every method is thread-safe.
 *
 * <p>The bytes are kept in memory the log reuses ({@link ChunkStore}): what a read or an event
 * hands out is a copy, and {@link #read(long, ByteBuffer, long)} copies into the caller's buffer
 * without allocating.
 */
public final class OutputLog {
  /** The events a watcher holds before it lags, the seed's channel capacity. */
  static final int WATCH_CAPACITY = 256;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();

  private final ChunkStore store; // under lock
  private ProcessExit exit;
  private boolean closed;
  private final List<Watcher> watchers = new ArrayList<>();

  /**
   * An empty log.
   *
   * @param maxBytes the most bytes to retain (the oldest whole chunks are dropped beyond it, but
   *     the newest chunk is always kept, however large); zero or negative for no bound
   */
  public OutputLog(long maxBytes) {
    this.store = new ChunkStore(maxBytes > 0 ? maxBytes : Long.MAX_VALUE);
  }

  /**
   * What fills the log, asked to read its source on a reader's own thread instead of making it wait
   * for the thread that usually does (and a hand-over from it).
   */
  @FunctionalInterface
  public interface Puller {
    /**
     * Reads what the source has, waiting for it until {@code deadlineNanos} at most, and appends it
     * to this log; called without the log's lock.
     *
     * @return what the reader should do next
     */
    Pulled pull(long deadlineNanos);
  }

  /** What a {@link Puller} found, and so what the reader does next. */
  public enum Pulled {
    /** Something was appended, the source ended, or the thread is interrupted: look again. */
    SOME,
    /**
     * Another thread holds the source, perhaps only for a moment: wait for an append, but pull
     * again after {@link #BUSY_RETRY_NANOS} at most.
     */
    BUSY,
    /** Nothing came, or the source is not the reader's to pull: wait for an append. */
    NONE
  }

  /**
   * How long a reader whose pull found the source {@link Pulled#BUSY} waits before it pulls again.
   * The thread that holds the source need not append anything (it may only have checked on it).
   */
  static final long BUSY_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private volatile Puller puller;

  /**
   * Lets blocked {@link #read}s pull from {@code p} before they wait (null: they only wait).
   * Watchers and appends are unaffected.
   */
  public void puller(Puller p) {
    this.puller = p;
  }

  /**
   * Appends a copy of {@code data} as one chunk at offset {@link #nextSeq()}, drops the oldest
   * chunks beyond the bound, sends an OUTPUT event to every watcher and wakes blocked readers.
   * Empty data, and any data after {@link #finish} or {@link #close}, is ignored. Never blocks.
   */
  public void append(ProcessStream stream, byte[] data) {
    Objects.requireNonNull(stream, "stream");
    if (data.length == 0) {
      return;
    }
    lock.lock();
    try {
      if (closed || exit != null) {
        return;
      }
      store.add(stream, data);
      appended();
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Where {@link #appendFrom} reads output from: implemented by the backend over a non-blocking fd.
   */
  @FunctionalInterface
  public interface Source {
    /**
     * Reads what is waiting into {@code into}, from index 0 and at most its capacity, without
     * waiting.
     *
     * @return the number of bytes read; 0 or negative when none came (the source knows why)
     */
    long read(ByteBuffer into);
  }

  /**
   * Reads {@code source} into {@code buffer} up to {@code maxReads} times, appending each read as
   * one chunk on {@code stream} (as {@link #append} does), and stops at the first read that fills
   * less than the buffer; wakes blocked readers once for all of them, so that what one wake-up of
   * the backend read a reader takes in one go. After {@link #finish} or {@link #close} the bytes
   * are read and dropped. Holds the log's lock through the reads, so the source must not block.
   *
   * @param buffer the reading thread's own (native) buffer, which stays in its cache: the bytes are
   *     copied into the log's memory after each read
   * @return the number of bytes taken from the source
   */
  public long appendFrom(ProcessStream stream, Source source, ByteBuffer buffer, int maxReads) {
    Objects.requireNonNull(stream, "stream");
    lock.lock();
    try {
      long total = 0;
      boolean added = false;
      for (int i = 0; i < maxReads; i++) {
        long n = source.read(buffer);
        if (n <= 0) {
          break;
        }
        if (!closed && exit == null) {
          store.add(stream, buffer, (int) n);
          appended();
          added = true;
        }
        total += n;
        if (n < buffer.capacity()) {
          break; // the source is (almost surely) empty: the next call finds out
        }
      }
      if (added) {
        changed.signalAll();
      }
      return total;
    } finally {
      lock.unlock();
    }
  }

  /** Under the lock, after a chunk was added: tells the watchers. */
  private void appended() {
    if (!watchers.isEmpty()) {
      deliver(ProcessEvent.output(store.copy(store.size() - 1)));
    }
  }

  /**
   * Marks the end of the output: the process has exited and every byte it wrote was appended.
   * Watchers get an EXITED event at {@link #nextSeq()}; readers at the end get end of file; later
   * appends are ignored. Only the first call counts. Never blocks.
   */
  public void finish(ProcessExit exit) {
    Objects.requireNonNull(exit, "exit");
    lock.lock();
    try {
      if (this.exit != null) {
        return;
      }
      this.exit = exit;
      if (!watchers.isEmpty()) {
        deliver(ProcessEvent.exited(store.nextSeq(), exit));
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Closes the log and drops its output: every watcher gets a CLOSED event at {@link #nextSeq()},
   * after which its stream ends; blocked and later reads throw {@link ProcessClosedException}.
   * Idempotent. Never blocks.
   */
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      ProcessEvent event = ProcessEvent.closed(store.nextSeq());
      for (Watcher w : watchers) {
        w.offer(event);
      }
      watchers.clear();
      // Nothing can read the output any more; let it go even while the session object lives on.
      store.clear();
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * {@link #finish} then {@link #close} as one step: watchers get EXITED then CLOSED, and a reader
   * blocked at the end sees the close (ProcessClosedException), never the end of output in between.
   */
  public void finishAndClose(ProcessExit exit) {
    lock.lock(); // reentrant: finish and close take it again
    try {
      finish(exit);
      close();
    } finally {
      lock.unlock();
    }
  }

  /**
   * As {@link #read(long, int, long)} without a deadline.
   *
   * @throws InterruptedException when the thread is interrupted while it would wait
   */
  public ProcessOutput read(long afterSeq, int maxBytes) throws InterruptedException {
    return read(afterSeq, maxBytes, Long.MAX_VALUE);
  }

  /**
   * Reads up to {@code maxBytes} from offset {@code afterSeq} on, waiting until there is some, the
   * log is finished or closed, or the deadline passes. Chunks are returned as they were appended
   * (the first may start inside an appended chunk and the last may be cut at {@code maxBytes}),
   * never merged, each with its own offset and stream, in arrays of their own (copies: the log
   * reuses its memory). The checks come in this order: {@code maxBytes}, closed, gap, beyond the
   * end.
   *
   * <p>Output that is available is returned even when the thread is interrupted or the deadline has
   * passed; those only end a wait.
   *
   * @param deadlineNanos the {@link System#nanoTime()} at which to give up waiting, or {@link
   *     Long#MAX_VALUE} to wait as long as it takes
   * @return the chunks, with {@code nextSeq} just past the last byte and {@code eof} when the log
   *     is finished and that is its end; when there is nothing more and the log is finished, no
   *     chunks and {@code eof}; when the deadline passed first, no chunks, {@code nextSeq} = {@code
   *     afterSeq} and not {@code eof}
   * @throws SandboxException VALIDATION when {@code maxBytes} is not positive or {@code afterSeq}
   *     is beyond {@link #nextSeq()}
   * @throws ProcessClosedException when the log is closed, also while waiting
   * @throws SequenceGapException when {@code afterSeq} was dropped by the bound, or is negative
   * @throws InterruptedException when the thread is interrupted while it would wait (at once when
   *     it already is)
   */
  public ProcessOutput read(long afterSeq, int maxBytes, long deadlineNanos)
      throws InterruptedException {
    if (maxBytes <= 0) {
      throw SandboxException.of(SandboxException.Kind.VALIDATION, "Read maxBytes must be positive");
    }
    lock.lock();
    try {
      if (!awaitBytes(afterSeq, deadlineNanos)) {
        return new ProcessOutput(afterSeq, List.of(), exit != null);
      }
      return collect(afterSeq, maxBytes);
    } finally {
      lock.unlock();
    }
  }

  /**
   * As {@link #read(long, ByteBuffer, long)} without a deadline.
   *
   * @throws InterruptedException when the thread is interrupted while it would wait
   */
  public OutputRead read(long afterSeq, ByteBuffer into) throws InterruptedException {
    return read(afterSeq, into, Long.MAX_VALUE);
  }

  /**
   * Reads from offset {@code afterSeq} on into {@code into}, waiting as {@link #read(long, int,
   * long)} does; allocates nothing. The bytes copied are those of consecutive chunks of one stream,
   * the stream of the chunk holding {@code afterSeq}, as far as {@code into} has room: the next
   * read goes on from {@link OutputRead#nextSeq()}. The buffer's position advances by the number of
   * bytes copied; its limit is unchanged. The checks come in the order of {@link #read(long, int,
   * long)}, the buffer's room (and that it is writable) first.
   *
   * @return what was copied: from {@code afterSeq} to {@code nextSeq}, on {@code stream}
   * @throws SandboxException VALIDATION when {@code into} is read-only or has no room, or {@code
   *     afterSeq} is beyond {@link #nextSeq()}
   * @throws ProcessClosedException when the log is closed, also while waiting
   * @throws SequenceGapException when {@code afterSeq} was dropped by the bound, or is negative
   * @throws InterruptedException when the thread is interrupted while it would wait
   */
  public OutputRead read(long afterSeq, ByteBuffer into, long deadlineNanos)
      throws InterruptedException {
    room(into);
    lock.lock();
    try {
      if (!awaitBytes(afterSeq, deadlineNanos)) {
        return new OutputRead(afterSeq, 0, null, exit != null);
      }
      int before = into.position();
      ProcessStream stream = store.copyTo(afterSeq, into);
      int n = into.position() - before;
      long next = afterSeq + n;
      return new OutputRead(next, n, stream, exit != null && next == store.nextSeq());
    } finally {
      lock.unlock();
    }
  }

  /**
   * The room {@code into} has for a read.
   *
   * @throws SandboxException VALIDATION when it is read-only or has none
   */
  static int room(ByteBuffer into) {
    if (into.isReadOnly() || !into.hasRemaining()) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "Read buffer must be writable and have room (got "
              + (into.isReadOnly() ? "a read-only buffer" : "no room")
              + ")");
    }
    return into.remaining();
  }

  /**
   * Under the lock: waits until there are bytes after {@code afterSeq} (true), or the log is
   * finished at {@code afterSeq} or the deadline passed (false; {@code exit} tells which), pulling
   * from the {@link Puller} before it waits.
   */
  private boolean awaitBytes(long afterSeq, long deadlineNanos) throws InterruptedException {
    Pulled pulled = null; // the last pull's answer, until the next wait
    while (true) {
      if (closed) {
        throw new ProcessClosedException();
      }
      long start = store.retainedStart();
      if (afterSeq < start) {
        throw new SequenceGapException(afterSeq, start);
      }
      long next = store.nextSeq();
      if (afterSeq > next) {
        throw SandboxException.of(
            SandboxException.Kind.VALIDATION,
            "afterSeq " + afterSeq + " is beyond buffered output (next=" + next + ")");
      }
      // The retained chunks are contiguous up to nextSeq, so a cursor below it has bytes.
      if (afterSeq < next) {
        return true;
      }
      if (exit != null) {
        return false;
      }
      Puller p = puller;
      if (p != null
          && (pulled == null || pulled == Pulled.SOME)
          && !Thread.currentThread().isInterrupted()) {
        lock.unlock();
        try {
          pulled = p.pull(deadlineNanos); // appends through this log, under its lock
        } finally {
          lock.lock();
        }
        // Whatever it says, the log may have changed (and been signalled) while it was unlocked:
        // look again before waiting, and wait before pulling again when it had nothing.
        continue;
      }
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      boolean busy = pulled == Pulled.BUSY;
      if (deadlineNanos == Long.MAX_VALUE && !busy) {
        changed.await();
      } else {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        changed.awaitNanos(busy ? Math.min(left, BUSY_RETRY_NANOS) : left);
      }
      pulled = null;
    }
  }

  /**
   * A new watcher: every retained chunk replayed as an OUTPUT event, then EXITED if the log is
   * finished, then live events, up to {@link EventStream}'s bound of 256.
   *
   * <p>When the replay alone would be more than 256 events, the stream instead holds a single LAG
   * event at {@link #retainedFrom()} and ends: the watcher should read from there. Otherwise events
   * are queued while fewer than 255 wait; the one that does not fit is replaced by a LAG event at
   * its own offset (the first byte the watcher missed; for EXITED, the end of the log), the last
   * slot is reserved for that LAG, and the stream ends once the events before it are taken. A
   * CLOSED event always fits and ends the stream too; EXITED does not.
   *
   * @throws ProcessClosedException when the log is closed
   */
  public EventStream watch() {
    lock.lock();
    try {
      if (closed) {
        throw new ProcessClosedException();
      }
      Watcher w = new Watcher();
      int size = store.size();
      int replay = size + (exit != null ? 1 : 0);
      if (replay > WATCH_CAPACITY) {
        w.offer(ProcessEvent.lag(store.retainedStart()));
        return w;
      }
      for (int i = 0; i < size; i++) {
        if (!w.offer(ProcessEvent.output(store.copy(i)))) {
          return w;
        }
      }
      if (exit != null && !w.offer(ProcessEvent.exited(store.nextSeq(), exit))) {
        return w;
      }
      watchers.add(w);
      return w;
    } finally {
      lock.unlock();
    }
  }

  /** The offset the next appended byte gets: the number of bytes ever appended. */
  public long nextSeq() {
    lock.lock();
    try {
      return store.nextSeq();
    } finally {
      lock.unlock();
    }
  }

  /** The offset of the first retained byte; {@link #nextSeq()} when nothing is retained. */
  public long retainedFrom() {
    lock.lock();
    try {
      return store.retainedStart();
    } finally {
      lock.unlock();
    }
  }

  /** Whether {@link #finish} was called. */
  public boolean isFinished() {
    lock.lock();
    try {
      return exit != null;
    } finally {
      lock.unlock();
    }
  }

  /** Whether {@link #close} was called. */
  public boolean isClosed() {
    lock.lock();
    try {
      return closed;
    } finally {
      lock.unlock();
    }
  }

  /** The number of bytes retained (0 after {@link #close}). */
  public long retainedBytes() {
    lock.lock();
    try {
      return store.retainedBytes();
    } finally {
      lock.unlock();
    }
  }

  /** The number of live watchers, so tests can see that ended streams were detached. */
  int watcherCount() {
    lock.lock();
    try {
      return watchers.size();
    } finally {
      lock.unlock();
    }
  }

  /** Reads from a cursor with retained bytes after it; two searches, no scan. */
  private ProcessOutput collect(long cursor, int maxBytes) {
    long next = store.nextSeq();
    long end = Math.min(next, cursor + maxBytes);
    int first = store.chunkEndingAfter(cursor);
    int last = store.chunkEndingAfter(end - 1);
    OutputChunk[] out = new OutputChunk[last - first + 1];
    for (int i = first; i <= last; i++) {
      out[i - first] = store.copy(i, Math.max(cursor, store.start(i)), Math.min(end, store.end(i)));
    }
    return new ProcessOutput(end, List.of(out), exit != null && end == next);
  }

  /** Offers {@code event} to every watcher, dropping those whose stream it ended. */
  private void deliver(ProcessEvent event) {
    int kept = 0;
    int n = watchers.size();
    for (int i = 0; i < n; i++) {
      Watcher w = watchers.get(i);
      if (w.offer(event)) {
        watchers.set(kept++, w);
      }
    }
    if (kept < n) {
      watchers.subList(kept, n).clear();
    }
  }

  private void unsubscribe(Watcher w) {
    lock.lock();
    try {
      watchers.remove(w);
    } finally {
      lock.unlock();
    }
  }

  /**
   * One watcher's queue. The log offers events under its own lock and then takes the watcher's, so
   * the watcher never takes the log's lock while holding its own.
   */
  private final class Watcher implements EventStream {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition available = lock.newCondition();
    private final ArrayDeque<ProcessEvent> queue = new ArrayDeque<>();

    /** No more events will be queued: a LAG or CLOSED was, or the consumer closed the stream. */
    private boolean ended;

    /**
     * Queues {@code event} without blocking, or a LAG in its place when it does not fit.
     *
     * @return whether the watcher still wants events (false once its stream has ended)
     */
    boolean offer(ProcessEvent event) {
      lock.lock();
      try {
        if (ended) {
          return false;
        }
        switch (event.type()) {
          case CLOSED, LAG -> {
            queue.add(event);
            ended = true;
          }
          case OUTPUT, EXITED -> {
            // One slot stays free so that the LAG telling the consumer what it missed fits.
            if (queue.size() < WATCH_CAPACITY - 1) {
              queue.add(event);
            } else {
              queue.add(ProcessEvent.lag(event.seq()));
              ended = true;
            }
          }
        }
        available.signalAll();
        return !ended;
      } finally {
        lock.unlock();
      }
    }

    @Override
    public ProcessEvent take() throws InterruptedException {
      lock.lock();
      try {
        while (queue.isEmpty()) {
          if (ended) {
            return null;
          }
          available.await();
        }
        return queue.poll();
      } finally {
        lock.unlock();
      }
    }

    @Override
    public ProcessEvent poll(Duration timeout) throws InterruptedException {
      long left = TimeUnit.NANOSECONDS.convert(timeout);
      lock.lock();
      try {
        while (queue.isEmpty()) {
          if (ended || left <= 0) {
            return null;
          }
          left = available.awaitNanos(left);
        }
        return queue.poll();
      } finally {
        lock.unlock();
      }
    }

    @Override
    public boolean isEnded() {
      lock.lock();
      try {
        return ended && queue.isEmpty();
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void close() {
      boolean subscribed;
      lock.lock();
      try {
        subscribed = !ended;
        ended = true;
        queue.clear();
        available.signalAll();
      } finally {
        lock.unlock();
      }
      if (subscribed) {
        unsubscribe(this);
      }
    }

    @Override
    public String toString() {
      lock.lock();
      try {
        return "EventStream[queued=" + queue.size() + ", ended=" + ended + "]";
      } finally {
        lock.unlock();
      }
    }
  }

  @Override
  public String toString() {
    lock.lock();
    try {
      return "OutputLog[retainedFrom="
          + store.retainedStart()
          + ", nextSeq="
          + store.nextSeq()
          + ", retainedBytes="
          + store.retainedBytes()
          + ", chunks="
          + store.size()
          + ", finished="
          + (exit != null)
          + ", closed="
          + closed
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
