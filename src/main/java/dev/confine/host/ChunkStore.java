package dev.confine.host;

import dev.confine.session.OutputChunk;
import dev.confine.session.ProcessStream;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The bytes of an {@link OutputLog} and where its chunks lie in them. Not thread-safe: the log's
 * lock guards it.
 *
 * <p>The bytes live in segments, heap arrays filled front to back: the newest one (the tail) takes
 * each append ({@link #reserve}, copy into {@link #tail}, {@link #commit}), or a new tail does when
 * the chunk does not fit in what is left (at most a chunk's size of a segment goes unused: with the
 * engine's reads of up to 64 KiB and full 256 KiB segments, at most a quarter). A chunk lies within
 * one segment, and segments are filled in order, so the chunks of one segment are consecutive and
 * the segment is free once the bound has dropped its last chunk. Free full-size segments go to a
 * small pool and take the next output: a log that streams through its bound allocates nothing once
 * it is full, which keeps a streaming session level with ProcessBuilder (docs/benchmarks.md). The
 * first segments are small (4 KiB, doubling up to the full size) so that a session that only wrote
 * a prompt holds 4 KiB.
 *
 * <p>The chunk index is a ring of primitive arrays (start offset, segment, offset in it, stream) in
 * which trimming drops from the front and appending adds at the back, both O(1); a chunk ends where
 * the next one starts, the newest at {@link #nextSeq}. The chunk holding a cursor is found in the
 * start offsets alone, searched from the newest end because readers mostly read at the tail.
 */
final class ChunkStore {
  /** The first segment's size. */
  static final int MIN_SEGMENT = 4 << 10;

  /** The full segment size, when the bound is at least that. */
  static final int MAX_SEGMENT = 256 << 10;

  private static final int POOL = 2;
  private static final int INITIAL_INDEX = 16;
  private static final ProcessStream[] STREAMS = ProcessStream.values();
  private static final long[] NO_STARTS = {};
  private static final byte[][] NO_SEGMENTS = {};
  private static final int[] NO_OFFSETS = {};
  private static final byte[] NO_STREAMS = {};

  private final long maxBytes;
  private final int segmentSize;

  // The chunk index: a power-of-two ring, allocated with the first chunk.
  private long[] starts = NO_STARTS;
  private byte[][] segments = NO_SEGMENTS;
  private int[] offsets = NO_OFFSETS;
  private byte[] streams = NO_STREAMS;
  private int head;
  private int size;
  private long nextSeq;

  private byte[] tail; // the segment appends go to; null before the first
  private int tailUsed;
  private final byte[][] pool = new byte[POOL][];
  private int pooled;

  /**
   * @param maxBytes the most bytes to retain ({@link Long#MAX_VALUE}: no bound); the oldest whole
   *     chunks are dropped beyond it, but never the newest
   */
  ChunkStore(long maxBytes) {
    this.maxBytes = maxBytes;
    // No larger than the bound needs: the smallest power of two at least as large, within the two.
    int size = MIN_SEGMENT;
    while (size < MAX_SEGMENT && size < maxBytes) {
      size <<= 1;
    }
    this.segmentSize = size;
  }

  /** The offset the next appended byte gets: the number of bytes ever appended. */
  long nextSeq() {
    return nextSeq;
  }

  /** The offset of the first retained byte; {@link #nextSeq} when nothing is retained. */
  long retainedStart() {
    return size == 0 ? nextSeq : starts[head];
  }

  /** The number of bytes retained. */
  long retainedBytes() {
    return nextSeq - retainedStart();
  }

  /** The number of chunks retained. */
  int size() {
    return size;
  }

  /** The full segment size of this store (the pooled one). */
  int segmentSize() {
    return segmentSize;
  }

  /** The number of free segments kept for reuse. */
  int pooled() {
    return pooled;
  }

  /**
   * Makes room for a chunk of {@code n} bytes (positive) in the tail, replacing it when too little
   * is left, and returns where in {@link #tail} the chunk goes: copy it there, then {@link
   * #commit}.
   */
  int reserve(int n) {
    if (tail == null || tail.length - tailUsed < n) {
      newTail(n);
    }
    return tailUsed;
  }

  /** The segment appends go to; call {@link #reserve} first. */
  byte[] tail() {
    return tail;
  }

  /**
   * Records the {@code n} bytes just copied into {@link #tail} at {@link #reserve}'s offset as the
   * newest chunk, then drops the oldest chunks beyond the bound.
   */
  void commit(ProcessStream stream, int n) {
    push(stream, tail, tailUsed, n);
    tailUsed += n;
    trim();
  }

  /** Appends a copy of {@code data} (not empty) as the newest chunk, then trims to the bound. */
  void add(ProcessStream stream, byte[] data) {
    int at = reserve(data.length); // before tail is read: it may replace it
    System.arraycopy(data, 0, tail, at, data.length);
    commit(stream, data.length);
  }

  /**
   * Appends a copy of the first {@code n} bytes of {@code data} (positive) as {@link #add} does.
   */
  void add(ProcessStream stream, ByteBuffer data, int n) {
    int at = reserve(n);
    data.get(0, tail, at, n);
    commit(stream, n);
  }

  /**
   * Makes a new tail with room for {@code need} bytes: the next size up (doubling from {@link
   * #MIN_SEGMENT} to the full size, a pooled segment when it is the full size), or an array of
   * exactly {@code need} bytes when that is more than the full size.
   */
  private void newTail(int need) {
    if (need > segmentSize) {
      tail = new byte[need];
      tailUsed = 0;
      return;
    }
    int next = tail == null ? MIN_SEGMENT : (int) Math.min(segmentSize, 2L * tail.length);
    while (next < need) {
      next <<= 1;
    }
    if (next == segmentSize && pooled > 0) {
      tail = pool[--pooled];
      pool[pooled] = null;
    } else {
      tail = new byte[next];
    }
    tailUsed = 0;
  }

  private void push(ProcessStream stream, byte[] segment, int offset, int n) {
    if (size == starts.length) {
      grow();
    }
    int at = (head + size) & (starts.length - 1);
    starts[at] = nextSeq;
    segments[at] = segment;
    offsets[at] = offset;
    streams[at] = (byte) stream.ordinal();
    size++;
    nextSeq += n;
  }

  private void grow() {
    int capacity = Math.max(INITIAL_INDEX, starts.length * 2);
    long[] s = new long[capacity];
    byte[][] g = new byte[capacity][];
    int[] o = new int[capacity];
    byte[] t = new byte[capacity];
    for (int i = 0; i < size; i++) {
      int p = at(i);
      s[i] = starts[p];
      g[i] = segments[p];
      o[i] = offsets[p];
      t[i] = streams[p];
    }
    starts = s;
    segments = g;
    offsets = o;
    streams = t;
    head = 0;
  }

  /** Drops the oldest chunks while more than the bound is retained, keeping the newest. */
  private void trim() {
    while (size > 1 && nextSeq - starts[head] > maxBytes) {
      byte[] segment = segments[head];
      segments[head] = null;
      head = (head + 1) & (starts.length - 1);
      size--;
      // Its chunks are consecutive: when the new oldest lies elsewhere, none of them is left.
      if (segment != segments[head] && segment != tail) {
        release(segment);
      }
    }
  }

  private void release(byte[] segment) {
    if (segment.length == segmentSize && pooled < POOL) {
      pool[pooled++] = segment;
    }
  }

  /** Forgets every chunk and segment; the offsets go on from {@link #nextSeq}. */
  void clear() {
    starts = NO_STARTS;
    segments = NO_SEGMENTS;
    offsets = NO_OFFSETS;
    streams = NO_STREAMS;
    head = 0;
    size = 0;
    tail = null;
    tailUsed = 0;
    Arrays.fill(pool, null);
    pooled = 0;
  }

  private int at(int i) {
    return (head + i) & (starts.length - 1);
  }

  /** The offset of retained chunk {@code i} (0 = the oldest). */
  long start(int i) {
    return starts[at(i)];
  }

  /** The offset just past retained chunk {@code i}. */
  long end(int i) {
    return i + 1 < size ? start(i + 1) : nextSeq;
  }

  /**
   * A chunk holding a copy of the bytes of retained chunk {@code i} from {@code from} to {@code
   * to}.
   */
  OutputChunk copy(int i, long from, long to) {
    int p = at(i);
    int offset = offsets[p] + (int) (from - starts[p]);
    byte[] bytes = new byte[(int) (to - from)];
    System.arraycopy(segments[p], offset, bytes, 0, bytes.length);
    return OutputChunk.adopting(from, STREAMS[streams[p]], bytes);
  }

  /** A copy of the whole retained chunk {@code i}. */
  OutputChunk copy(int i) {
    return copy(i, start(i), end(i));
  }

  /**
   * Copies the bytes from {@code cursor} (retained, below {@link #nextSeq}) into {@code dst}, up to
   * its remaining room, through consecutive chunks of the stream of the chunk holding the cursor.
   *
   * @return the stream copied from
   */
  ProcessStream copyTo(long cursor, ByteBuffer dst) {
    int first = chunkEndingAfter(cursor);
    byte stream = streams[at(first)];
    for (int i = first; i < size && dst.hasRemaining(); i++) {
      int p = at(i);
      if (streams[p] != stream) {
        break;
      }
      long end = end(i);
      int n = (int) Math.min(end - cursor, dst.remaining());
      dst.put(segments[p], offsets[p] + (int) (cursor - starts[p]), n);
      cursor += n;
    }
    return STREAMS[stream];
  }

  /** The index of the first retained chunk that ends after {@code seq}; {@code size} if none. */
  int chunkEndingAfter(long seq) {
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
}
