package dev.confine.host;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.session.ProcessStream;
import org.junit.jupiter.api.Test;

/** How {@link ChunkStore} sizes, retires and reuses its segments. */
class ChunkStoreTest {
  private static final ProcessStream OUT = ProcessStream.STDOUT;

  @Test
  void theFullSegmentSizeFollowsTheBoundWithinItsLimits() {
    assertThat(new ChunkStore(1).segmentSize()).isEqualTo(ChunkStore.MIN_SEGMENT);
    assertThat(new ChunkStore(5000).segmentSize()).isEqualTo(8192);
    assertThat(new ChunkStore(8192).segmentSize()).isEqualTo(8192);
    assertThat(new ChunkStore(100_000).segmentSize()).isEqualTo(128 << 10);
    assertThat(new ChunkStore(10 << 20).segmentSize()).isEqualTo(ChunkStore.MAX_SEGMENT);
    assertThat(new ChunkStore(Long.MAX_VALUE).segmentSize()).isEqualTo(ChunkStore.MAX_SEGMENT);
  }

  @Test
  void nothingIsAllocatedBeforeOutputAndAPromptTakesTheSmallestSegment() {
    ChunkStore store = new ChunkStore(10 << 20);
    assertThat(store.tail()).isNull();
    store.add(OUT, "$ ".getBytes());
    assertThat(store.tail()).hasSize(ChunkStore.MIN_SEGMENT);
  }

  /** Appends {@code n} bytes of {@code value} through {@link ChunkStore#reserve}. */
  private static void put(ChunkStore store, int n, int value) {
    int at = store.reserve(n);
    java.util.Arrays.fill(store.tail(), at, at + n, (byte) value);
    store.commit(OUT, n);
  }

  @Test
  void segmentsDoubleAndAChunkThatDoesNotFitStartsTheNext() {
    ChunkStore store = new ChunkStore(Long.MAX_VALUE);
    put(store, 4000, 1);
    byte[] first = store.tail();
    assertThat(first).hasSize(4096);
    put(store, 96, 2); // fits exactly
    assertThat(store.tail()).isSameAs(first);
    put(store, 1, 3); // does not: a new, larger segment
    assertThat(store.tail()).hasSize(8192);
    java.util.List<Integer> sizes = new java.util.ArrayList<>(java.util.List.of(4096));
    while (store.tail().length < ChunkStore.MAX_SEGMENT) {
      if (sizes.getLast() != store.tail().length) {
        sizes.add(store.tail().length);
      }
      put(store, 64 * 1024, 4);
    }
    sizes.add(store.tail().length);
    // 64 KiB chunks: the 8 KiB segment takes none, the 16 and 32 KiB ones are skipped.
    assertThat(sizes).containsExactly(4096, 8192, 65536, 131072, 262144);
    assertThat(store.copy(0).data()).containsOnly(1);
    assertThat(store.copy(2).data()).containsExactly(3);
  }

  @Test
  void streamingThroughTheBoundReusesTheSameMemory() {
    int bound = 1 << 20;
    ChunkStore store = new ChunkStore(bound);
    java.util.Set<byte[]> warm =
        java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    java.util.Set<byte[]> later =
        java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    java.util.Random sizes = new java.util.Random(1);
    for (long streamed = 0; streamed < 64 << 20; ) {
      int n = 1 + sizes.nextInt(64 * 1024);
      put(store, n, (int) (streamed >>> 16));
      (streamed < 8 << 20 ? warm : later).add(store.tail());
      streamed += n;
    }
    // 56 MiB more through a 1 MiB bound went into the memory the first 8 MiB used: the segments
    // the bound holds, the tail, the pool's two.
    assertThat(warm).containsAll(later);
    assertThat(later).hasSizeLessThanOrEqualTo(bound / ChunkStore.MAX_SEGMENT * 4 / 3 + 4);
    assertThat(store.retainedBytes()).isBetween(bound - 64 * 1024L, (long) bound);
  }

  @Test
  void aChunkLargerThanASegmentGetsAnArrayOfItsOwnAndTheNextOneAFullSegment() {
    ChunkStore store = new ChunkStore(16 << 10);
    byte[] big = new byte[100_000];
    big[99_999] = 7;
    store.add(OUT, big);
    assertThat(store.tail()).hasSize(100_000);
    assertThat(store.copy(0).data()).isEqualTo(big);
    store.add(OUT, new byte[] {1});
    assertThat(store.tail()).hasSize(16 << 10);
    assertThat(store.size()).isEqualTo(1); // the bound dropped the big one, the newest stays
    assertThat(store.pooled()).isZero(); // an odd-sized array is not kept
  }

  @Test
  void droppedFullSegmentsArePooledAndTakeTheNextOutput() {
    ChunkStore store = new ChunkStore(8192); // full segments of 8 KiB
    put(store, 4096, 1); // the 4 KiB first segment, full
    put(store, 8192, 2);
    byte[] a = store.tail();
    put(store, 8192, 3);
    byte[] b = store.tail();
    assertThat(b).isNotSameAs(a);
    assertThat(store.size()).isEqualTo(1); // the bound keeps only the newest: a is free
    assertThat(store.pooled()).isEqualTo(1);
    put(store, 100, 4);
    assertThat(store.tail()).isSameAs(a);
    assertThat(store.pooled()).isEqualTo(1); // and the bound dropped b's chunk: b is free
    put(store, 8100, 5);
    put(store, 1, 6);
    assertThat(store.tail()).isSameAs(b);
    store.clear();
    assertThat(store.tail()).isNull();
    assertThat(store.size()).isZero();
    assertThat(store.nextSeq()).isEqualTo(4096 + 8192 + 8192 + 100 + 8100 + 1);
  }
}
