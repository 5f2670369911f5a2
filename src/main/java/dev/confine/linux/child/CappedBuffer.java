package dev.confine.linux.child;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.function.IntFunction;

/**
 * Keeps the first {@code cap} bytes of a stream and counts the rest, so the writer never sees a
 * short write: output past the cap is read and dropped, and the child runs on.
 *
 * <p>The kept bytes live in chunks that are never copied while the stream runs (the first 8 KiB,
 * each next one twice the last, up to 256 KiB, none beyond what the cap leaves), so the heap they
 * take is the kept bytes plus at most one chunk; {@link #take} copies them once into an exact
 * array, letting each chunk go as it is copied. Each chunk is reserved in the JVM's {@link
 * CaptureBudget} first. A chunk the budget or the heap cannot give, or a final array the heap
 * cannot give, is not an {@link OutOfMemoryError} for the caller: the capture stops keeping (it
 * still counts), and {@link #starvation()} says what was lost.
 */
final class CappedBuffer {
  static final int FIRST_CHUNK = 8 * 1024;
  static final int MAX_CHUNK = 256 * 1024;
  private static final byte[] EMPTY = new byte[0];

  private final long cap;
  private final CaptureBudget budget;
  private final IntFunction<byte[]> allocator;
  private long reserved; // in the budget; 0 once released
  private byte[][] chunks = new byte[4][];
  private int chunkCount;
  private int tailUsed; // bytes used in chunks[chunkCount - 1]
  private long size;
  private long total;
  private byte[] taken; // the exact array once taken; chunks are gone then
  private boolean released; // nothing more is kept
  private String starvation;

  /**
   * A buffer keeping at most {@code cap} bytes.
   *
   * @throws IllegalArgumentException when {@code cap} is negative or above {@link
   *     Execution#maxOutputCap()}
   */
  CappedBuffer(long cap) {
    this(cap, CaptureBudget.SHARED, byte[]::new);
  }

  /**
   * As {@link #CappedBuffer(long)}, reserving chunks in {@code budget} and allocating them and the
   * final array with {@code allocator}.
   */
  CappedBuffer(long cap, CaptureBudget budget, IntFunction<byte[]> allocator) {
    if (cap < 0 || cap > Execution.maxOutputCap()) {
      throw new IllegalArgumentException(
          "output cap " + cap + " outside 0.." + Execution.maxOutputCap());
    }
    this.cap = cap;
    this.budget = budget;
    this.allocator = allocator;
  }

  synchronized void append(MemorySegment src, int len) {
    total += len;
    long keep = released || starvation != null ? 0 : Math.min(len, cap - size);
    long offset = 0;
    while (keep > 0) {
      if (chunkCount == 0 || tailUsed == chunks[chunkCount - 1].length) {
        if (!grow()) {
          return;
        }
      }
      byte[] tail = chunks[chunkCount - 1];
      int n = (int) Math.min(keep, tail.length - tailUsed);
      MemorySegment.copy(src, ValueLayout.JAVA_BYTE, offset, tail, tailUsed, n);
      tailUsed += n;
      size += n;
      offset += n;
      keep -= n;
    }
  }

  private boolean grow() {
    int next =
        chunkCount == 0 ? FIRST_CHUNK : Math.min(MAX_CHUNK, chunks[chunkCount - 1].length * 2);
    next = (int) Math.min(next, cap - size);
    if (!budget.reserve(next)) {
      starvation =
          "the capture budget of this JVM ("
              + budget.capacity()
              + " bytes, a quarter of its heap, shared by the execs running) was spent after the"
              + " first "
              + size
              + " bytes";
      return false;
    }
    byte[] chunk;
    try {
      chunk = allocator.apply(next);
    } catch (OutOfMemoryError e) {
      // A failed allocation leaves the heap as it was; the caller learns of it from starvation().
      budget.release(next);
      starvation = "the JVM's heap could hold only the first " + size + " bytes";
      return false;
    }
    reserved += next;
    if (chunkCount == chunks.length) {
      chunks = Arrays.copyOf(chunks, chunkCount * 2);
    }
    chunks[chunkCount++] = chunk;
    tailUsed = 0;
    return true;
  }

  /**
   * Gives the chunks' reservation back to the budget: the stream has ended and keeps nothing more.
   * The kept bytes stay until {@link #take}. Idempotent.
   */
  synchronized void release() {
    released = true;
    budget.release(reserved);
    reserved = 0;
  }

  /** A copy of the bytes kept so far; the buffer goes on. */
  synchronized byte[] snapshot() {
    if (taken != null) {
      return taken.clone();
    }
    byte[] out = new byte[(int) size];
    copyChunks(out, false);
    return out;
  }

  /**
   * The kept bytes, for the result: copied once into an exact array, each chunk let go as it is
   * copied; the buffer keeps nothing more after this (its reservation is given back). Later calls
   * return the same array (callers must not change it). When the heap cannot give that array, the
   * kept bytes are dropped: the result is empty and {@link #starvation()} says so.
   */
  synchronized byte[] take() {
    release();
    if (taken == null) {
      try {
        taken = size == 0 ? EMPTY : allocator.apply((int) size);
        copyChunks(taken, true);
      } catch (OutOfMemoryError e) {
        starvation =
            "the JVM's heap could not hold a copy of its " + size + " bytes for the result";
        taken = EMPTY;
      }
      chunks = null;
      chunkCount = 0;
    }
    return taken;
  }

  private void copyChunks(byte[] out, boolean release) {
    int at = 0;
    for (int i = 0; i < chunkCount; i++) {
      int n = i == chunkCount - 1 ? tailUsed : chunks[i].length;
      System.arraycopy(chunks[i], 0, out, at, n);
      at += n;
      if (release) {
        chunks[i] = null;
      }
    }
  }

  /** Whether bytes were read that are not kept (past the cap, or lost for lack of heap). */
  synchronized boolean truncated() {
    return total > (taken != null ? taken.length : size);
  }

  /** How many bytes are kept. */
  synchronized long kept() {
    return taken != null ? taken.length : size;
  }

  synchronized long total() {
    return total;
  }

  /** What the capture lost for lack of heap, or null when nothing was. */
  synchronized String starvation() {
    return starvation;
  }
}
