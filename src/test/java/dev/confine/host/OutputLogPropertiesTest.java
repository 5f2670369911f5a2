package dev.confine.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.SequenceGapException;
import dev.confine.session.OutputChunk;
import dev.confine.session.OutputRead;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link OutputLog}'s whole contract by property: random appends and reads against a model. Its own
 * class, apart from {@link OutputLogTest}: Surefire writes one report per class and engine, and a
 * class run by both JUnit Jupiter and jqwik had one report overwrite the other.
 */
class OutputLogPropertiesTest {
  /**
   * One step: append {@code data} to {@code stream} (through {@link OutputLog#appendFrom} in reads
   * of at most {@code max} bytes when {@code direct}), or (data null) read up to {@code max} bytes,
   * into a buffer when {@code direct}.
   */
  record Step(ProcessStream stream, byte[] data, int max, boolean direct) {}

  /** Small chunks around a small bound: many chunks dropped one by one, in the first segment. */
  @Provide
  Arbitrary<List<Step>> steps() {
    return steps(40, 100, 300);
  }

  /**
   * Chunks up to past the engine's read size around bounds of several segments: segments filled,
   * retired with room left, dropped, pooled and reused, and chunks larger than a segment.
   */
  @Provide
  Arbitrary<List<Step>> largeSteps() {
    return steps(300_000, 200_000, 60);
  }

  private static Arbitrary<List<Step>> steps(int maxData, int maxRead, int maxSteps) {
    Arbitrary<Step> append =
        Arbitraries.of(ProcessStream.class)
            .flatMap(
                stream ->
                    Arbitraries.integers()
                        .between(0, maxData)
                        .flatMap(
                            n ->
                                Arbitraries.integers()
                                    .between(1, Math.max(1, n))
                                    .flatMap(
                                        piece ->
                                            Arbitraries.of(true, false)
                                                .map(
                                                    direct ->
                                                        new Step(
                                                            stream,
                                                            random(n, piece),
                                                            piece,
                                                            direct)))));
    Arbitrary<Step> read =
        Arbitraries.integers()
            .between(1, maxRead)
            .flatMap(m -> Arbitraries.of(true, false).map(d -> new Step(null, null, m, d)));
    return Arbitraries.frequencyOf(Tuple.of(3, append), Tuple.of(2, read))
        .list()
        .ofMaxSize(maxSteps);
  }

  /** {@code n} bytes that differ from one offset to the next (seeded by the piece size). */
  private static byte[] random(int n, int seed) {
    byte[] data = new byte[n];
    new java.util.Random(seed).nextBytes(data);
    return data;
  }

  @Property(tries = 300)
  void readsReconstructExactlyTheAppendedBytes(
      @ForAll("steps") List<Step> steps, @ForAll @IntRange(min = -1, max = 300) int bound)
      throws InterruptedException {
    run(steps, bound);
  }

  @Property(tries = 40)
  void segmentsAreFilledDroppedAndReusedWithoutLosingAByte(
      @ForAll("largeSteps") List<Step> steps,
      @ForAll @IntRange(min = -1, max = 1_500_000) int bound)
      throws InterruptedException {
    run(steps, bound);
  }

  private static void run(List<Step> steps, int bound) throws InterruptedException {
    OutputLog log = new OutputLog(bound);
    ByteArrayOutputStream appended = new ByteArrayOutputStream();
    List<ProcessStream> streamOf = new ArrayList<>();
    List<Integer> chunkSizes = new ArrayList<>();
    long cursor = 0;
    for (Step step : steps) {
      if (step.data() != null) {
        appended.writeBytes(step.data());
        for (int i = 0; i < step.data().length; i++) {
          streamOf.add(step.stream());
        }
        if (step.direct()) {
          appendFrom(log, step, chunkSizes);
        } else {
          if (step.data().length > 0) {
            chunkSizes.add(step.data().length);
          }
          log.append(step.stream(), step.data().clone());
        }
        assertRetention(log, bound, chunkSizes);
      } else {
        if (cursor < log.retainedFrom()) {
          long at = cursor;
          assertThatThrownBy(() -> log.read(at, step.max(), 0))
              .isInstanceOf(SequenceGapException.class);
          assertThatThrownBy(() -> log.read(at, ByteBuffer.allocate(1), 0))
              .isInstanceOf(SequenceGapException.class);
          cursor = log.retainedFrom();
        }
        byte[] all = appended.toByteArray();
        if (step.direct()) {
          cursor = readInto(log, cursor, step.max(), all, streamOf);
        } else {
          ProcessOutput out = log.read(cursor, step.max(), System.nanoTime());
          assertThat(out.bytes().length).isLessThanOrEqualTo(step.max());
          cursor = check(out, cursor, all, streamOf);
        }
      }
    }
    log.finish(ProcessExit.exited(0));
    // From the retained start on, reading to the end gives back exactly the bytes appended.
    long from = log.retainedFrom();
    ByteArrayOutputStream read = new ByteArrayOutputStream();
    byte[] all = appended.toByteArray();
    for (long at = from; ; ) {
      ProcessOutput out = log.read(at, 7919);
      at = check(out, at, all, streamOf);
      read.writeBytes(out.bytes());
      if (out.eof()) {
        break;
      }
    }
    assertThat(read.toByteArray()).isEqualTo(Arrays.copyOfRange(all, (int) from, all.length));
    assertThat(log.nextSeq()).isEqualTo(all.length);
  }

  /**
   * Appends the step's data through {@link OutputLog#appendFrom}, as a pipe would give it: reads of
   * at most {@code max} bytes into a 64 KiB buffer, each read one chunk.
   */
  private static void appendFrom(OutputLog log, Step step, List<Integer> chunkSizes) {
    byte[] data = step.data();
    ByteBuffer buffer = ByteBuffer.wrap(new byte[64 * 1024]);
    int[] at = {0};
    while (at[0] < data.length) {
      long before = at[0];
      long got =
          log.appendFrom(
              step.stream(),
              into -> {
                int n = Math.min(Math.min(into.capacity(), step.max()), data.length - at[0]);
                if (n == 0) {
                  return -11; // EAGAIN
                }
                into.put(0, data, at[0], n);
                at[0] += n;
                chunkSizes.add(n);
                return n;
              },
              buffer,
              4);
      assertThat(got).isEqualTo(at[0] - before).isPositive();
    }
  }

  /** Reads into a buffer of {@code room} and checks it; returns the cursor after it. */
  private static long readInto(
      OutputLog log, long cursor, int room, byte[] all, List<ProcessStream> streamOf)
      throws InterruptedException {
    ByteBuffer into =
        room % 2 == 0 ? ByteBuffer.allocate(room + 3) : ByteBuffer.allocateDirect(room + 3);
    into.position(3);
    OutputRead r = log.read(cursor, into, System.nanoTime());
    assertThat(into.position()).isEqualTo(3 + r.length());
    assertThat(r.nextSeq()).isEqualTo(cursor + r.length());
    if (cursor == log.nextSeq()) {
      assertThat(r.length()).isZero();
      assertThat(r.stream()).isNull();
      return cursor;
    }
    assertThat(r.length()).isPositive();
    byte[] got = new byte[r.length()];
    into.get(3, got);
    assertThat(got).isEqualTo(Arrays.copyOfRange(all, (int) cursor, (int) r.nextSeq()));
    for (long i = cursor; i < r.nextSeq(); i++) {
      assertThat(streamOf.get((int) i)).isEqualTo(r.stream());
    }
    // It stopped because the buffer is full, the output ends, or the next byte is another stream's.
    assertThat(
            !into.hasRemaining()
                || r.nextSeq() == log.nextSeq()
                || streamOf.get((int) r.nextSeq()) != r.stream())
        .isTrue();
    return r.nextSeq();
  }

  /** Checks one read against what was appended and returns the cursor after it. */
  private static long check(
      ProcessOutput out, long cursor, byte[] all, List<ProcessStream> streamOf) {
    long at = cursor;
    for (OutputChunk c : out.chunks()) {
      assertThat(c.seq()).isEqualTo(at);
      assertThat(c.length()).isPositive();
      assertThat(c.data()).isEqualTo(Arrays.copyOfRange(all, (int) c.seq(), (int) c.end()));
      for (long i = c.seq(); i < c.end(); i++) {
        assertThat(streamOf.get((int) i)).isEqualTo(c.stream());
      }
      at = c.end();
    }
    assertThat(out.nextSeq()).isEqualTo(at);
    return at;
  }

  /** The log keeps the newest chunks whose total fits the bound, and at least the newest one. */
  private static void assertRetention(OutputLog log, int bound, List<Integer> chunkSizes) {
    long expected = 0;
    for (int i = chunkSizes.size() - 1; i >= 0; i--) {
      long with = expected + chunkSizes.get(i);
      if (bound > 0 && with > bound && i != chunkSizes.size() - 1) {
        break;
      }
      expected = with;
    }
    assertThat(log.retainedBytes()).isEqualTo(expected);
    assertThat(log.retainedFrom()).isEqualTo(log.nextSeq() - expected);
  }
}
