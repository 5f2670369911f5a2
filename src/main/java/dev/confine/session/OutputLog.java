package dev.confine.session;

import dev.confine.ProcessClosedException;
import dev.confine.SandboxException;
import dev.confine.SequenceGapException;
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
 * <p>The backend {@link #append appends} each read of the child's pipes or terminal as one chunk,
 * {@link #finish finishes} the log once the child has exited and every byte it wrote was appended,
 * and {@link #close closes} it when the session is closed; the session's {@code read} and {@code
 * watch} delegate here. {@code append}, {@code finish} and {@code close} never block on readers or
 * watchers (they hold the log's lock only briefly), so the thread that pumps the child's output is
 * never held up by a slow client. Every method is thread-safe.
 */
public final class OutputLog {
  /** The events a watcher holds before it lags, the seed's channel capacity. */
  static final int WATCH_CAPACITY = 256;

  private static final int INITIAL_RING = 16;

  private final long maxBytes;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();

  /*
   * The retained chunks, oldest first, in a power-of-two ring: trimming drops from the front and
   * appending adds at the back, both O(1). Beside it, at the same index, each chunk's offset: the
   * chunk holding a cursor is found in that array alone (chunks are contiguous, so a chunk ends
   * where the next one starts, the newest at nextSeq), searched from the newest end because
   * readers mostly read at the tail. A binary search through the chunk objects themselves touched
   * two cold cache lines per step (the chunk, its array's length): with 64 MiB retained in 8 KiB
   * chunks, a fifth of a streaming reader's time.
   */
  private OutputChunk[] ring = new OutputChunk[INITIAL_RING];
  private long[] starts = new long[INITIAL_RING];
  private int head;
  private int size;
  private long retainedBytes;
  private long nextSeq;
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
    this.maxBytes = maxBytes > 0 ? maxBytes : Long.MAX_VALUE;
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
   * Appends {@code data} as one chunk at offset {@link #nextSeq()}, drops the oldest chunks beyond
   * the bound, sends an OUTPUT event to every watcher and wakes blocked readers. Empty data, and
   * any data after {@link #finish} or {@link #close}, is ignored. Never blocks.
   *
   * @param data the bytes, which the log takes over: the caller must not change them afterwards
   */
  public void append(ProcessStream stream, byte[] data) {
    Objects.requireNonNull(stream, "stream");
    if (data.length == 0) {
      return;
    }
    lock.lock();
    try {
      if (add(stream, data)) {
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Appends each of {@code chunks} as {@link #append} does, in order, waking blocked readers once
   * for all of them: what one wake-up of the engine read, a reader takes in one go.
   *
   * @param chunks the chunks, whose arrays the log takes over (the list itself is not kept)
   */
  public void append(ProcessStream stream, List<byte[]> chunks) {
    Objects.requireNonNull(stream, "stream");
    lock.lock();
    try {
      boolean added = false;
      for (byte[] data : chunks) {
        added |= data.length > 0 && add(stream, data);
      }
      if (added) {
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Adds one non-empty chunk under the lock; false when the log takes no more output. */
  private boolean add(ProcessStream stream, byte[] data) {
    if (closed || exit != null) {
      return false;
    }
    OutputChunk chunk = new OutputChunk(nextSeq, stream, data, true);
    nextSeq += data.length;
    push(chunk);
    while (size > 1 && retainedBytes > maxBytes) {
      dropOldest();
    }
    if (!watchers.isEmpty()) {
      deliver(ProcessEvent.output(chunk));
    }
    return true;
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
        deliver(ProcessEvent.exited(nextSeq, exit));
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
      ProcessEvent event = ProcessEvent.closed(nextSeq);
      for (Watcher w : watchers) {
        w.offer(event);
      }
      watchers.clear();
      // Nothing can read the output any more; let it go even while the session object lives on.
      ring = new OutputChunk[0];
      starts = new long[0];
      head = 0;
      size = 0;
      retainedBytes = 0;
      changed.signalAll();
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
   * never merged, each with its own offset and stream. The checks come in this order: {@code
   * maxBytes}, closed, gap, beyond the end.
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
      throw new SandboxException(
          SandboxException.Kind.VALIDATION, "sandbox: Read maxBytes must be positive");
    }
    lock.lock();
    try {
      Pulled pulled = null; // the last pull's answer, until the next wait
      while (true) {
        if (closed) {
          throw new ProcessClosedException();
        }
        long start = retainedStart();
        if (afterSeq < start) {
          throw new SequenceGapException(afterSeq, start);
        }
        if (afterSeq > nextSeq) {
          throw new SandboxException(
              SandboxException.Kind.VALIDATION,
              "sandbox: afterSeq "
                  + afterSeq
                  + " is beyond buffered output (next="
                  + nextSeq
                  + ")");
        }
        // The retained chunks are contiguous up to nextSeq, so a cursor below it has bytes.
        if (afterSeq < nextSeq) {
          return collect(afterSeq, maxBytes);
        }
        if (exit != null) {
          return new ProcessOutput(afterSeq, List.of(), true);
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
            return new ProcessOutput(afterSeq, List.of(), false);
          }
          changed.awaitNanos(busy ? Math.min(left, BUSY_RETRY_NANOS) : left);
        }
        pulled = null;
      }
    } finally {
      lock.unlock();
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
      int replay = size + (exit != null ? 1 : 0);
      if (replay > WATCH_CAPACITY) {
        w.offer(ProcessEvent.lag(retainedStart()));
        return w;
      }
      for (int i = 0; i < size; i++) {
        if (!w.offer(ProcessEvent.output(chunk(i)))) {
          return w;
        }
      }
      if (exit != null && !w.offer(ProcessEvent.exited(nextSeq, exit))) {
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
      return nextSeq;
    } finally {
      lock.unlock();
    }
  }

  /** The offset of the first retained byte; {@link #nextSeq()} when nothing is retained. */
  public long retainedFrom() {
    lock.lock();
    try {
      return retainedStart();
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
      return retainedBytes;
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

  private long retainedStart() {
    return size == 0 ? nextSeq : starts[head];
  }

  private OutputChunk chunk(int i) {
    return ring[(head + i) & (ring.length - 1)];
  }

  private void push(OutputChunk c) {
    if (size == ring.length) {
      int capacity = Math.max(INITIAL_RING, ring.length * 2);
      OutputChunk[] grown = new OutputChunk[capacity];
      long[] grownStarts = new long[capacity];
      for (int i = 0; i < size; i++) {
        grown[i] = chunk(i);
        grownStarts[i] = start(i);
      }
      ring = grown;
      starts = grownStarts;
      head = 0;
    }
    int at = (head + size) & (ring.length - 1);
    ring[at] = c;
    starts[at] = c.seq();
    size++;
    retainedBytes += c.length();
  }

  /** The offset of retained chunk {@code i} (0 = the oldest). */
  private long start(int i) {
    return starts[(head + i) & (starts.length - 1)];
  }

  private void dropOldest() {
    long start = starts[head];
    ring[head] = null;
    head = (head + 1) & (ring.length - 1);
    size--;
    retainedBytes -= retainedStart() - start; // the next chunk starts where the dropped one ended
  }

  /** The index of the first retained chunk that ends after {@code seq}; {@code size} if none. */
  private int chunkEndingAfter(long seq) {
    if (seq >= nextSeq || size == 0) {
      return size;
    }
    // The chunk holding seq is the last one starting at or before it. Gallop back from the newest
    // (a reader at the tail needs one look), then search the range found.
    int hi = size - 1;
    if (start(hi) <= seq) {
      return hi;
    }
    int lo = hi - 1;
    for (int step = 1; lo > 0 && start(lo) > seq; step <<= 1) {
      hi = lo;
      lo = Math.max(0, hi - 2 * step);
    }
    if (start(lo) > seq) {
      return 0; // before the oldest retained chunk: that one is the first to end after it
    }
    while (hi - lo > 1) { // start(lo) <= seq < start(hi)
      int mid = (lo + hi) >>> 1;
      if (start(mid) <= seq) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** Reads from a cursor with retained bytes after it; two binary searches, no scan. */
  private ProcessOutput collect(long cursor, int maxBytes) {
    long end = Math.min(nextSeq, cursor + maxBytes);
    int first = chunkEndingAfter(cursor);
    int last = chunkEndingAfter(end - 1);
    OutputChunk[] out = new OutputChunk[last - first + 1];
    for (int i = first; i <= last; i++) {
      OutputChunk c = chunk(i);
      long from = Math.max(cursor, c.seq());
      long to = Math.min(end, c.end());
      // Chunks are immutable, so a whole one is shared; only a cut one needs new bytes.
      out[i - first] =
          from == c.seq() && to == c.end()
              ? c
              : new OutputChunk(
                  from, c.stream(), sliceOf(c, (int) (from - c.seq()), (int) (to - c.seq())), true);
    }
    return new ProcessOutput(end, List.of(out), exit != null && end == nextSeq);
  }

  private static byte[] sliceOf(OutputChunk c, int from, int to) {
    byte[] bytes = new byte[to - from];
    c.buffer().get(from, bytes);
    return bytes;
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
          + retainedStart()
          + ", nextSeq="
          + nextSeq
          + ", retainedBytes="
          + retainedBytes
          + ", chunks="
          + size
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
