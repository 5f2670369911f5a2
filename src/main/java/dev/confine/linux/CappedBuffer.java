package dev.confine.linux;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * Keeps the first {@code cap} bytes of a stream and counts the rest, so the writer never sees a
 * short write: output past the cap is read and dropped, and the child runs on.
 */
final class CappedBuffer {
  private final long cap;
  private byte[] bytes = new byte[0];
  private int size;
  private long total;

  CappedBuffer(long cap) {
    this.cap = Math.min(cap, Integer.MAX_VALUE - 16);
  }

  synchronized void append(MemorySegment src, int len) {
    total += len;
    int keep = (int) Math.min(len, cap - size);
    if (keep <= 0) {
      return;
    }
    if (size + keep > bytes.length) {
      long grown = Math.max((long) size + keep, Math.min(cap, Math.max(8192L, bytes.length * 2L)));
      bytes = Arrays.copyOf(bytes, (int) grown);
    }
    MemorySegment.copy(src, ValueLayout.JAVA_BYTE, 0, bytes, size, keep);
    size += keep;
  }

  synchronized byte[] toByteArray() {
    return Arrays.copyOf(bytes, size);
  }

  synchronized boolean truncated() {
    return total > size;
  }

  synchronized long total() {
    return total;
  }
}
