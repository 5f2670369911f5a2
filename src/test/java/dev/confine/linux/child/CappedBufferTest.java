package dev.confine.linux.child;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

class CappedBufferTest {
  private static final MemorySegment SOURCE = Arena.global().allocate(64 * 1024);

  static {
    for (int i = 0; i < SOURCE.byteSize(); i++) {
      SOURCE.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) i);
    }
  }

  /** Records the size of every array it allocates. */
  private static final class Recording implements IntFunction<byte[]> {
    final List<Integer> sizes = new ArrayList<>();
    int failFrom = Integer.MAX_VALUE; // the allocation (0-based) from which the heap is "full"

    @Override
    public byte[] apply(int n) {
      if (sizes.size() >= failFrom) {
        throw new OutOfMemoryError("Java heap space (simulated)");
      }
      sizes.add(n);
      return new byte[n];
    }

    long total() {
      return sizes.stream().mapToLong(Integer::longValue).sum();
    }
  }

  private static byte[] expected(long n) {
    byte[] b = new byte[(int) n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (i % (64 * 1024));
    }
    return b;
  }

  private static void feed(CappedBuffer buffer, long bytes) {
    for (long done = 0; done < bytes; ) {
      int n = (int) Math.min(SOURCE.byteSize(), bytes - done);
      buffer.append(SOURCE, n);
      done += n;
    }
  }

  @Test
  void keepsTheFirstCapBytesAndCountsTheRest() {
    CappedBuffer b = new CappedBuffer(100_000);
    feed(b, 300_000);
    assertThat(b.truncated()).isTrue();
    assertThat(b.total()).isEqualTo(300_000);
    assertThat(b.take()).isEqualTo(expected(100_000));
    assertThat(b.starvation()).isNull();
  }

  @Test
  void growingNeverCopiesWhatIsKept() {
    // The old buffer doubled one array: 1 MiB kept cost ~2 MiB of copies, and ~3x at the end.
    Recording heap = new Recording();
    CappedBuffer b = new CappedBuffer(10 << 20, new CaptureBudget(1L << 40), heap);
    feed(b, 1 << 20);
    assertThat(heap.total())
        .as("chunks allocated for 1 MiB: %s", heap.sizes)
        .isLessThanOrEqualTo((1 << 20) + CappedBuffer.MAX_CHUNK);
    assertThat(heap.sizes).allMatch(n -> n <= CappedBuffer.MAX_CHUNK);
    assertThat(heap.sizes.get(0)).isEqualTo(CappedBuffer.FIRST_CHUNK);
    byte[] out = b.take();
    assertThat(out).isEqualTo(expected(1 << 20));
    assertThat(heap.sizes.get(heap.sizes.size() - 1)).isEqualTo(1 << 20); // one exact copy
  }

  @Test
  void noChunkGoesBeyondTheCap() {
    Recording heap = new Recording();
    CappedBuffer b = new CappedBuffer(5, new CaptureBudget(1L << 40), heap);
    feed(b, 100);
    assertThat(heap.sizes).containsExactly(5);
    assertThat(b.take()).isEqualTo(expected(5));
  }

  @Test
  void aChunkTheHeapCannotGiveStopsKeepingButNotCounting() {
    Recording heap = new Recording();
    heap.failFrom = 3;
    CaptureBudget budget = new CaptureBudget(1L << 40);
    CappedBuffer b = new CappedBuffer(10 << 20, budget, heap);
    feed(b, 1 << 20); // no OutOfMemoryError reaches the reader
    long kept = heap.total();
    assertThat(b.total()).isEqualTo(1 << 20);
    assertThat(b.truncated()).isTrue();
    assertThat(b.starvation())
        .isEqualTo("the JVM's heap could hold only the first " + kept + " bytes");
    assertThat(budget.used()).isEqualTo(kept); // the failed chunk's reservation was given back
    b.release();
    assertThat(budget.used()).isZero();
  }

  @Test
  void aFinalArrayTheHeapCannotGiveLeavesAnEmptyResultAndSaysSo() {
    Recording heap = new Recording();
    CappedBuffer b = new CappedBuffer(10 << 20, new CaptureBudget(1L << 40), heap);
    feed(b, 100_000);
    heap.failFrom = heap.sizes.size();
    assertThat(b.take()).isEmpty();
    assertThat(b.truncated()).isTrue();
    assertThat(b.starvation())
        .isEqualTo("the JVM's heap could not hold a copy of its 100000 bytes for the result");
  }

  @Test
  void aSpentBudgetStopsKeepingAndReleasingGivesItBack() {
    CaptureBudget budget = new CaptureBudget(100_000);
    CappedBuffer first = new CappedBuffer(10 << 20, budget, byte[]::new);
    CappedBuffer second = new CappedBuffer(10 << 20, budget, byte[]::new);
    feed(first, 1 << 20);
    feed(second, 1 << 20);
    assertThat(budget.used()).isLessThanOrEqualTo(100_000);
    assertThat(first.starvation()).startsWith("the capture budget of this JVM (100000 bytes");
    assertThat(second.starvation()).startsWith("the capture budget of this JVM (100000 bytes");
    long kept = first.kept() + second.kept();
    assertThat(kept).isEqualTo(budget.used());
    assertThat(first.take().length + second.take().length).isEqualTo((int) kept);
    assertThat(budget.used()).isZero();
    CappedBuffer third = new CappedBuffer(10 << 20, budget, byte[]::new);
    feed(third, 50_000);
    assertThat(third.starvation()).isNull();
    assertThat(third.take()).isEqualTo(expected(50_000));
  }

  @Test
  void aSnapshotLeavesTheBufferGoingOn() {
    CappedBuffer b = new CappedBuffer(1 << 20);
    feed(b, 10_000);
    assertThat(b.snapshot()).isEqualTo(expected(10_000));
    feed(b, 10_000);
    byte[] all = b.take();
    assertThat(all).hasSize(20_000);
    assertThat(b.take()).isSameAs(all);
    assertThat(b.snapshot()).isEqualTo(all).isNotSameAs(all);
  }

  @Test
  void nothingIsKeptAfterTheStreamsAreClosed() {
    CappedBuffer b = new CappedBuffer(1 << 20);
    feed(b, 10);
    b.release();
    feed(b, 10);
    assertThat(b.take()).hasSize(10);
    assertThat(b.total()).isEqualTo(20);
    assertThat(b.truncated()).isTrue();
  }

  @Test
  void aCapAboveWhatTheJvmCanCaptureIsRefusedNotClamped() {
    assertThat(Execution.maxOutputCap())
        .isEqualTo(Math.min(Integer.MAX_VALUE - 8, Runtime.getRuntime().maxMemory() / 8));
    assertThatThrownBy(() -> new CappedBuffer(Execution.maxOutputCap() + 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new CappedBuffer(-1)).isInstanceOf(IllegalArgumentException.class);
    new CappedBuffer(Execution.maxOutputCap()); // allocates nothing up front
  }
}
