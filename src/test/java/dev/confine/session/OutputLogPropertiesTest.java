package dev.confine.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.SequenceGapException;
import java.io.ByteArrayOutputStream;
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
  /** One step: append {@code data} to {@code stream}, or (data null) read up to {@code max}. */
  record Step(ProcessStream stream, byte[] data, int max) {}

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Step> append =
        Arbitraries.of(ProcessStream.class)
            .flatMap(
                stream ->
                    Arbitraries.bytes()
                        .array(byte[].class)
                        .ofMaxSize(40)
                        .map(data -> new Step(stream, data, 0)));
    Arbitrary<Step> read = Arbitraries.integers().between(1, 100).map(m -> new Step(null, null, m));
    return Arbitraries.frequencyOf(Tuple.of(3, append), Tuple.of(2, read)).list().ofMaxSize(300);
  }

  @Property(tries = 300)
  void readsReconstructExactlyTheAppendedBytes(
      @ForAll("steps") List<Step> steps, @ForAll @IntRange(min = -1, max = 300) int bound)
      throws InterruptedException {
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
        if (step.data().length > 0) {
          chunkSizes.add(step.data().length);
        }
        log.append(step.stream(), step.data().clone());
        assertRetention(log, bound, chunkSizes);
      } else {
        if (cursor < log.retainedFrom()) {
          long at = cursor;
          assertThatThrownBy(() -> log.read(at, step.max(), 0))
              .isInstanceOf(SequenceGapException.class);
          cursor = log.retainedFrom();
        }
        ProcessOutput out = log.read(cursor, step.max(), System.nanoTime());
        assertThat(out.bytes().length).isLessThanOrEqualTo(step.max());
        cursor = check(out, cursor, appended.toByteArray(), streamOf);
      }
    }
    log.finish(ProcessExit.exited(0));
    // From the retained start on, reading to the end gives back exactly the bytes appended.
    long from = log.retainedFrom();
    ByteArrayOutputStream read = new ByteArrayOutputStream();
    byte[] all = appended.toByteArray();
    for (long at = from; ; ) {
      ProcessOutput out = log.read(at, 7);
      at = check(out, at, all, streamOf);
      read.writeBytes(out.bytes());
      if (out.eof()) {
        break;
      }
    }
    assertThat(read.toByteArray()).isEqualTo(Arrays.copyOfRange(all, (int) from, all.length));
    assertThat(log.nextSeq()).isEqualTo(all.length);
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
