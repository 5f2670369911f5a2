package dev.confine.host;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class OutputLogTest {
  private static final Duration SHORT = Duration.ofMillis(100);

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static String s(OutputChunk c) {
    return new String(c.data(), UTF_8);
  }

  private static long in(Duration d) {
    return System.nanoTime() + d.toNanos();
  }

  /** Appends {@code n} one-byte chunks. */
  private static void appendBytes(OutputLog log, int n) {
    for (int i = 0; i < n; i++) {
      log.append(ProcessStream.STDOUT, new byte[] {(byte) i});
    }
  }

  private static List<ProcessEvent> drain(EventStream events) throws InterruptedException {
    List<ProcessEvent> all = new ArrayList<>();
    for (ProcessEvent e; (e = events.poll(Duration.ZERO)) != null; ) {
      all.add(e);
    }
    return all;
  }

  /** Runs {@code read} on another thread, returning once it is seen to be blocked. */
  private static CompletableFuture<ProcessOutput> blockedRead(ReadCall read)
      throws InterruptedException {
    CompletableFuture<ProcessOutput> f = new CompletableFuture<>();
    Thread t =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    f.complete(read.call());
                  } catch (Throwable e) {
                    f.completeExceptionally(e);
                  }
                });
    while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
      assertThat(f).isNotDone();
      Thread.sleep(1);
    }
    return f;
  }

  @FunctionalInterface
  private interface ReadCall {
    ProcessOutput call() throws InterruptedException;
  }

  private static Throwable failureOf(CompletableFuture<?> f) throws InterruptedException {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (TimeoutException e) {
      throw new AssertionError("still blocked", e);
    }
    throw new AssertionError("completed normally");
  }

  // ---- append and retention ----

  @Test
  @Timeout(10)
  void aReaderWhosePullFindsTheSourceBusyPullsAgainWithoutAnAppend() throws Exception {
    // The holder of the source appends nothing (it only checked on it): the reader must not wait
    // for an append that never comes, but pull again after the busy pause.
    OutputLog log = new OutputLog(0);
    List<Long> calls = new ArrayList<>();
    log.puller(
        deadline -> {
          synchronized (calls) {
            calls.add(System.nanoTime());
            if (calls.size() == 1) {
              return OutputLog.Pulled.BUSY;
            }
          }
          log.append(ProcessStream.STDOUT, b("late"));
          return OutputLog.Pulled.SOME;
        });
    ProcessOutput out = log.read(0, 100);
    assertThat(out.chunks()).extracting(c -> new String(c.data(), UTF_8)).containsExactly("late");
    assertThat(calls).hasSize(2);
    assertThat(calls.get(1) - calls.get(0)).isGreaterThanOrEqualTo(OutputLog.BUSY_RETRY_NANOS / 2);
  }

  @Test
  @Timeout(10)
  void aReaderWhosePullFoundNothingWaitsForAnAppendAndThenPullsAgain() throws Exception {
    OutputLog log = new OutputLog(0);
    List<OutputLog.Pulled> answers = new ArrayList<>(List.of(OutputLog.Pulled.NONE));
    int[] pulls = {0};
    log.puller(
        deadline -> {
          synchronized (pulls) {
            pulls[0]++;
            return answers.isEmpty() ? OutputLog.Pulled.NONE : answers.remove(0);
          }
        });
    // Nothing is appended: the read waits out its deadline, not pulling in a loop (once more after
    // the wait, which returns at once with the deadline passed).
    ProcessOutput none = log.read(0, 100, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50));
    assertThat(none.chunks()).isEmpty();
    assertThat(none.eof()).isFalse();
    assertThat(pulls[0]).isBetween(1, 2);
    // An append wakes a waiting reader, which returns it.
    CompletableFuture<ProcessOutput> reader =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return log.read(0, 100);
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    Thread.sleep(50);
    log.append(ProcessStream.STDERR, b("x"));
    assertThat(reader.get(5, TimeUnit.SECONDS).chunks()).hasSize(1);
  }

  @Test
  void everyOffsetOfManyChunksIsFoundInItsChunk() throws InterruptedException {
    // Chunks of 1 to 7 bytes, some trimmed away: each retained offset must be read from the chunk
    // that holds it, near the newest end or far from it.
    OutputLog log = new OutputLog(5_000);
    List<long[]> spans = new ArrayList<>(); // {seq, end}
    for (int i = 0; i < 3_000; i++) {
      byte[] data = new byte[1 + i % 7];
      Arrays.fill(data, (byte) i);
      spans.add(new long[] {log.nextSeq(), log.nextSeq() + data.length});
      log.append(i % 2 == 0 ? ProcessStream.STDOUT : ProcessStream.STDERR, data);
    }
    for (long[] span : spans) {
      for (long at = span[0]; at < span[1]; at++) {
        if (at < log.retainedFrom()) {
          continue;
        }
        List<OutputChunk> chunks = log.read(at, 1).chunks();
        assertThat(chunks).hasSize(1);
        assertThat(chunks.get(0).seq()).isEqualTo(at);
        assertThat(chunks.get(0).data()[0]).isEqualTo((byte) spans.indexOf(span));
      }
    }
    assertThat(log.read(log.retainedFrom(), 1 << 20).bytes()).hasSize((int) log.retainedBytes());
  }

  @Test
  void appendGivesEachChunkTheOffsetOfItsFirstByte() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    assertThat(log.nextSeq()).isZero();
    assertThat(log.retainedFrom()).isZero();
    log.append(ProcessStream.STDOUT, b("abc"));
    log.append(ProcessStream.STDERR, b("de"));
    assertThat(log.nextSeq()).isEqualTo(5);
    assertThat(log.retainedFrom()).isZero();
    assertThat(log.retainedBytes()).isEqualTo(5);
    ProcessOutput out = log.read(0, 100);
    assertThat(out.chunks())
        .extracting(OutputChunk::seq, OutputChunk::stream)
        .containsExactly(tuple(0L, ProcessStream.STDOUT), tuple(3L, ProcessStream.STDERR));
    assertThat(out.nextSeq()).isEqualTo(5);
    assertThat(out.eof()).isFalse();
  }

  /** A source with {@code data} to give, in reads of at most {@code piece} bytes; counts reads. */
  private static final class Pipe implements OutputLog.Source {
    final byte[] data;
    final int piece;
    int at;
    int reads;

    Pipe(byte[] data, int piece) {
      this.data = data;
      this.piece = piece;
    }

    @Override
    public long read(ByteBuffer into) {
      reads++;
      int n = Math.min(Math.min(into.capacity(), piece), data.length - at);
      if (n == 0) {
        return -11; // EAGAIN
      }
      into.put(0, data, at, n);
      at += n;
      return n;
    }
  }

  /** A reading thread's buffer, as the engine's is: 64 KiB. */
  private static ByteBuffer buffer() {
    return ByteBuffer.wrap(new byte[64 * 1024]);
  }

  private static byte[] pattern(int n) {
    byte[] data = new byte[n];
    for (int i = 0; i < n; i++) {
      data[i] = (byte) (i * 31 + (i >>> 8));
    }
    return data;
  }

  @Test
  void appendFromStopsAtTheFirstReadThatFillsLessThanTheBuffer() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    Pipe pipe = new Pipe(b("hello"), Integer.MAX_VALUE);
    ByteBuffer buffer = buffer();
    assertThat(log.appendFrom(ProcessStream.STDOUT, pipe, buffer, 16)).isEqualTo(5);
    assertThat(pipe.reads).isEqualTo(1); // 5 bytes in a 64 KiB buffer: the pipe is empty
    assertThat(log.read(0, 100).chunks())
        .containsExactly(OutputChunk.of(0, ProcessStream.STDOUT, b("hello")));
    // Nothing there: nothing appended, and the source was asked once.
    assertThat(log.appendFrom(ProcessStream.STDOUT, pipe, buffer, 16)).isZero();
    assertThat(pipe.reads).isEqualTo(2);
    assertThat(log.nextSeq()).isEqualTo(5);
  }

  @Test
  void appendFromMakesEachReadOneChunkUpToMaxReads() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    byte[] data = pattern(100_000);
    Pipe pipe = new Pipe(data, Integer.MAX_VALUE);
    // Every read fills the buffer, so only maxReads stops it; each read is a chunk of its own,
    // the third one in a new segment (the first holds 4 KiB).
    ByteBuffer buffer = ByteBuffer.wrap(new byte[1500]);
    assertThat(log.appendFrom(ProcessStream.STDERR, pipe, buffer, 3)).isEqualTo(4500);
    assertThat(pipe.reads).isEqualTo(3);
    ProcessOutput out = log.read(0, 1 << 20);
    assertThat(out.chunks())
        .extracting(OutputChunk::seq, OutputChunk::length, OutputChunk::stream)
        .containsExactly(
            tuple(0L, 1500, ProcessStream.STDERR),
            tuple(1500L, 1500, ProcessStream.STDERR),
            tuple(3000L, 1500, ProcessStream.STDERR));
    assertThat(out.bytes()).isEqualTo(Arrays.copyOf(data, 4500));
  }

  @Test
  void appendFromAfterFinishOrCloseReadsAndDrops() {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("ab"));
    log.finish(ProcessExit.exited(0));
    Pipe pipe = new Pipe(b("late"), Integer.MAX_VALUE);
    assertThat(log.appendFrom(ProcessStream.STDOUT, pipe, buffer(), 16)).isEqualTo(4);
    assertThat(pipe.at).isEqualTo(4); // taken from the source, so that it drains
    assertThat(log.nextSeq()).isEqualTo(2);
    log.close();
    Pipe after = new Pipe(b("later"), Integer.MAX_VALUE);
    assertThat(log.appendFrom(ProcessStream.STDOUT, after, buffer(), 16)).isEqualTo(5);
    assertThat(log.nextSeq()).isEqualTo(2);
  }

  @Test
  @Timeout(10)
  void aBlockedReadIsWokenByAppendFrom() throws Exception {
    OutputLog log = new OutputLog(0);
    CompletableFuture<ProcessOutput> f = blockedRead(() -> log.read(0, 100));
    log.appendFrom(ProcessStream.TTY, new Pipe(b("prompt$ "), Integer.MAX_VALUE), buffer(), 16);
    assertThat(f.get(10, TimeUnit.SECONDS).chunks())
        .containsExactly(OutputChunk.of(0, ProcessStream.TTY, b("prompt$ ")));
  }

  @Test
  void chunksAndEventsHandedOutStayIntactWhenTheMemoryIsReused() throws InterruptedException {
    OutputLog log = new OutputLog(256 << 10);
    EventStream events = log.watch();
    byte[] first = pattern(4096);
    ByteBuffer buffer = buffer();
    log.appendFrom(ProcessStream.STDOUT, new Pipe(first, Integer.MAX_VALUE), buffer, 1);
    ProcessOutput read = log.read(0, 4096);
    ProcessEvent event = events.take();
    events.close();
    byte[] zeros = new byte[16 << 20];
    Pipe pipe = new Pipe(zeros, 64 * 1024);
    while (pipe.at < zeros.length) {
      log.appendFrom(ProcessStream.STDOUT, pipe, buffer, 16);
    }
    assertThat(read.bytes()).isEqualTo(first);
    assertThat(event.chunk().data()).isEqualTo(first);
  }

  // ---- read into a buffer ----

  @Test
  void aBufferReadCopiesOneStreamsConsecutiveChunksAndAdvancesThePosition()
      throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("ab"));
    log.append(ProcessStream.STDOUT, b("cde"));
    log.append(ProcessStream.STDERR, b("E"));
    log.append(ProcessStream.STDOUT, b("f"));
    java.nio.ByteBuffer into = java.nio.ByteBuffer.allocate(10);
    into.put((byte) '>');
    assertThat(log.read(1, into)).isEqualTo(new OutputRead(5, 4, ProcessStream.STDOUT, false));
    assertThat(into.position()).isEqualTo(5);
    assertThat(new String(into.array(), 0, 5, UTF_8)).isEqualTo(">bcde");
    // The next stream's bytes come in a read of their own.
    java.nio.ByteBuffer direct = java.nio.ByteBuffer.allocateDirect(1);
    assertThat(log.read(5, direct)).isEqualTo(new OutputRead(6, 1, ProcessStream.STDERR, false));
    assertThat(direct.get(0)).isEqualTo((byte) 'E');
    log.finish(ProcessExit.exited(0));
    into.clear();
    assertThat(log.read(6, into)).isEqualTo(new OutputRead(7, 1, ProcessStream.STDOUT, true));
    assertThat(log.read(7, into)).isEqualTo(new OutputRead(7, 0, null, true));
  }

  @Test
  void aBufferReadStopsWhereTheBufferIsFull() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.TTY, b("abcdef"));
    log.finish(ProcessExit.exited(0));
    java.nio.ByteBuffer into = java.nio.ByteBuffer.allocate(4);
    assertThat(log.read(0, into)).isEqualTo(new OutputRead(4, 4, ProcessStream.TTY, false));
    assertThat(into.array()).isEqualTo(b("abcd"));
  }

  @Test
  @Timeout(10)
  void aBufferReadWaitsLikeAChunkRead() throws Exception {
    OutputLog log = new OutputLog(0);
    java.nio.ByteBuffer into = java.nio.ByteBuffer.allocate(8);
    assertThat(log.read(0, into, in(SHORT))).isEqualTo(new OutputRead(0, 0, null, false));
    CompletableFuture<OutputRead> f = new CompletableFuture<>();
    Thread t =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    f.complete(log.read(0, into));
                  } catch (Throwable e) {
                    f.completeExceptionally(e);
                  }
                });
    while (t.getState() != Thread.State.WAITING) {
      Thread.sleep(1);
    }
    log.append(ProcessStream.STDOUT, b("hi"));
    assertThat(f.get(10, TimeUnit.SECONDS))
        .isEqualTo(new OutputRead(2, 2, ProcessStream.STDOUT, false));
    log.close();
    assertThatThrownBy(() -> log.read(2, java.nio.ByteBuffer.allocate(1)))
        .isInstanceOf(ProcessClosedException.class);
  }

  @Test
  void aBufferReadChecksItsBufferThenTheCursor() {
    OutputLog log = new OutputLog(2);
    log.append(ProcessStream.STDOUT, b("abc"));
    log.append(ProcessStream.STDOUT, b("de"));
    assertThatThrownBy(() -> log.read(-1, java.nio.ByteBuffer.allocate(0)))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("no room");
    assertThatThrownBy(() -> log.read(-1, java.nio.ByteBuffer.allocate(4).asReadOnlyBuffer()))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("read-only");
    assertThatThrownBy(() -> log.read(0, java.nio.ByteBuffer.allocate(4)))
        .isInstanceOf(SequenceGapException.class);
    assertThatThrownBy(() -> log.read(6, java.nio.ByteBuffer.allocate(4)))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("beyond");
  }

  @Test
  void emptyAppendIsIgnored() {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, new byte[0]);
    assertThat(log.nextSeq()).isZero();
    assertThat(log.retainedBytes()).isZero();
  }

  @Test
  void appendCopiesTheArray() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    byte[] data = b("abc");
    log.append(ProcessStream.STDOUT, data);
    data[0] = 'x';
    assertThat(s(log.read(0, 10).chunks().getFirst())).isEqualTo("abc");
  }

  @Test
  void trimmingDropsTheOldestWholeChunks() throws InterruptedException {
    OutputLog log = new OutputLog(10);
    log.append(ProcessStream.STDOUT, b("aaaa"));
    log.append(ProcessStream.STDOUT, b("bbbb"));
    assertThat(log.retainedBytes()).isEqualTo(8);
    log.append(ProcessStream.STDOUT, b("cccc"));
    assertThat(log.retainedFrom()).isEqualTo(4);
    assertThat(log.retainedBytes()).isEqualTo(8);
    assertThat(log.nextSeq()).isEqualTo(12);
    assertThat(log.read(4, 100).chunks())
        .extracting(OutputLogTest::s)
        .containsExactly("bbbb", "cccc");
  }

  @Test
  void exactlyTheBoundIsKept() {
    OutputLog log = new OutputLog(8);
    log.append(ProcessStream.STDOUT, b("aaaa"));
    log.append(ProcessStream.STDOUT, b("bbbb"));
    assertThat(log.retainedFrom()).isZero();
    assertThat(log.retainedBytes()).isEqualTo(8);
  }

  @Test
  void aSingleOversizedChunkIsKept() throws InterruptedException {
    OutputLog log = new OutputLog(4);
    log.append(ProcessStream.STDOUT, b("0123456789"));
    assertThat(log.retainedBytes()).isEqualTo(10);
    assertThat(log.retainedFrom()).isZero();
    assertThat(log.read(0, 100).bytes()).isEqualTo(b("0123456789"));
  }

  @Test
  void theNewestChunkIsNeverDropped() throws InterruptedException {
    OutputLog log = new OutputLog(5);
    log.append(ProcessStream.STDOUT, b("abc"));
    log.append(ProcessStream.STDERR, b("0123456789"));
    assertThat(log.retainedFrom()).isEqualTo(3);
    assertThat(log.retainedBytes()).isEqualTo(10);
    ProcessOutput out = log.read(3, 100);
    assertThat(out.chunks()).singleElement().extracting(OutputLogTest::s).isEqualTo("0123456789");
  }

  @Test
  void zeroOrNegativeBoundKeepsEverything() {
    for (long max : new long[] {0, -1, Long.MIN_VALUE}) {
      OutputLog log = new OutputLog(max);
      appendBytes(log, 1000);
      assertThat(log.retainedBytes()).isEqualTo(1000);
      assertThat(log.retainedFrom()).isZero();
    }
  }

  // ---- read: errors, in order ----

  @Test
  void nonPositiveMaxBytesIsCheckedFirst() {
    OutputLog log = new OutputLog(0);
    log.close();
    for (int max : new int[] {0, -1}) {
      assertThatThrownBy(() -> log.read(-5, max))
          .isExactlyInstanceOf(SandboxException.class)
          .hasMessage("sandbox: Read maxBytes must be positive")
          .satisfies(
              e ->
                  assertThat(((SandboxException) e).kind())
                      .isEqualTo(SandboxException.Kind.VALIDATION));
    }
  }

  @Test
  void closedComesBeforeGapAndRange() {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("abc"));
    log.close();
    assertThatThrownBy(() -> log.read(-1, 10)).isInstanceOf(ProcessClosedException.class);
    assertThatThrownBy(() -> log.read(99, 10)).isInstanceOf(ProcessClosedException.class);
    assertThatThrownBy(() -> log.read(0, 10)).isInstanceOf(ProcessClosedException.class);
  }

  @Test
  void aCursorBeforeTheRetainedStartIsAGap() {
    OutputLog log = new OutputLog(4);
    log.append(ProcessStream.STDOUT, b("abcd"));
    log.append(ProcessStream.STDOUT, b("efgh"));
    assertThatThrownBy(() -> log.read(3, 10))
        .isInstanceOfSatisfying(
            SequenceGapException.class,
            e -> {
              assertThat(e.afterSeq()).isEqualTo(3);
              assertThat(e.retainedFrom()).isEqualTo(4);
              assertThat(e.getMessage())
                  .startsWith(SequenceGapException.MESSAGE)
                  .endsWith("afterSeq 3, retained from 4");
            });
  }

  @Test
  void aNegativeCursorIsAGapEvenOnAnEmptyLog() {
    OutputLog log = new OutputLog(0);
    assertThatThrownBy(() -> log.read(-1, 10))
        .isInstanceOfSatisfying(
            SequenceGapException.class,
            e -> {
              assertThat(e.afterSeq()).isEqualTo(-1);
              assertThat(e.retainedFrom()).isZero();
            });
  }

  @Test
  void aCursorBeyondTheEndIsInvalid() {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("abc"));
    assertThatThrownBy(() -> log.read(5, 10))
        .isExactlyInstanceOf(SandboxException.class)
        .hasMessage("sandbox: afterSeq 5 is beyond buffered output (next=3)")
        .satisfies(
            e ->
                assertThat(((SandboxException) e).kind())
                    .isEqualTo(SandboxException.Kind.VALIDATION));
  }

  // ---- read: what comes back ----

  @Test
  void aReadFromInsideAChunkStartsAtTheCursor() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.TTY, b("hello"));
    ProcessOutput out = log.read(2, 100);
    assertThat(out.chunks())
        .singleElement()
        .isEqualTo(OutputChunk.of(2, ProcessStream.TTY, b("llo")));
    assertThat(out.nextSeq()).isEqualTo(5);
  }

  @Test
  void maxBytesCutsTheLastChunk() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("hello"));
    log.append(ProcessStream.STDOUT, b("world"));
    ProcessOutput first = log.read(0, 7);
    assertThat(first.chunks())
        .containsExactly(
            OutputChunk.of(0, ProcessStream.STDOUT, b("hello")),
            OutputChunk.of(5, ProcessStream.STDOUT, b("wo")));
    assertThat(first.nextSeq()).isEqualTo(7);
    ProcessOutput second = log.read(first.nextSeq(), 7);
    assertThat(second.chunks()).containsExactly(OutputChunk.of(7, ProcessStream.STDOUT, b("rld")));
    assertThat(second.nextSeq()).isEqualTo(10);
  }

  @Test
  void maxBytesCanCutInsideOneChunkFromBothEnds() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDERR, b("0123456789"));
    ProcessOutput out = log.read(3, 4);
    assertThat(out.chunks()).containsExactly(OutputChunk.of(3, ProcessStream.STDERR, b("3456")));
    assertThat(out.nextSeq()).isEqualTo(7);
  }

  @Test
  void chunksAreNeverMerged() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("a"));
    log.append(ProcessStream.STDOUT, b("b"));
    log.append(ProcessStream.STDERR, b("c"));
    assertThat(log.read(0, 100).chunks())
        .containsExactly(
            OutputChunk.of(0, ProcessStream.STDOUT, b("a")),
            OutputChunk.of(1, ProcessStream.STDOUT, b("b")),
            OutputChunk.of(2, ProcessStream.STDERR, b("c")));
  }

  @Test
  void eofOnlyWhenTheReadReachesTheEndOfAFinishedLog() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("hello"));
    assertThat(log.read(0, 100).eof()).isFalse();
    log.finish(ProcessExit.exited(0));
    assertThat(log.isFinished()).isTrue();
    ProcessOutput partial = log.read(0, 3);
    assertThat(partial.eof()).isFalse();
    ProcessOutput rest = log.read(partial.nextSeq(), 100);
    assertThat(rest.bytes()).isEqualTo(b("lo"));
    assertThat(rest.eof()).isTrue();
  }

  @Test
  void aCaughtUpReadOfAFinishedLogIsAnEmptyEof() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("hi"));
    log.finish(ProcessExit.exited(3));
    assertThat(log.read(2, 10)).isEqualTo(new ProcessOutput(2, List.of(), true));
    OutputLog empty = new OutputLog(0);
    empty.finish(ProcessExit.exited(0));
    assertThat(empty.read(0, 10)).isEqualTo(new ProcessOutput(0, List.of(), true));
  }

  @Test
  void outputStaysReadableAfterFinishAndAppendsAreIgnored() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("abc"));
    log.finish(ProcessExit.exited(0));
    log.append(ProcessStream.STDOUT, b("late"));
    assertThat(log.nextSeq()).isEqualTo(3);
    assertThat(log.read(0, 100).bytes()).isEqualTo(b("abc"));
    assertThat(log.read(0, 100).bytes()).isEqualTo(b("abc"));
  }

  @Test
  void closeDropsTheOutputAndLaterAppendsAreIgnored() {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("abc"));
    log.close();
    assertThat(log.isClosed()).isTrue();
    assertThat(log.retainedBytes()).isZero();
    log.append(ProcessStream.STDOUT, b("late"));
    assertThat(log.nextSeq()).isEqualTo(3);
    assertThat(log.retainedBytes()).isZero();
    log.close();
    assertThat(log.isClosed()).isTrue();
  }

  // ---- read: waiting ----

  @Test
  @Timeout(10)
  void aBlockedReadIsWokenByAppend() throws Exception {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("ab"));
    CompletableFuture<ProcessOutput> f = blockedRead(() -> log.read(2, 100));
    log.append(ProcessStream.STDERR, b("cd"));
    ProcessOutput out = f.get(10, TimeUnit.SECONDS);
    assertThat(out.chunks()).containsExactly(OutputChunk.of(2, ProcessStream.STDERR, b("cd")));
    assertThat(out.nextSeq()).isEqualTo(4);
  }

  @Test
  @Timeout(10)
  void aBlockedReadIsWokenByFinish() throws Exception {
    OutputLog log = new OutputLog(0);
    CompletableFuture<ProcessOutput> f = blockedRead(() -> log.read(0, 100));
    log.finish(ProcessExit.exited(0));
    assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(new ProcessOutput(0, List.of(), true));
  }

  @Test
  @Timeout(10)
  void aBlockedReadIsWokenByClose() throws Exception {
    OutputLog log = new OutputLog(0);
    CompletableFuture<ProcessOutput> f =
        blockedRead(() -> log.read(0, 100, in(Duration.ofHours(1))));
    log.close();
    assertThat(failureOf(f)).isInstanceOf(ProcessClosedException.class);
  }

  @Test
  @Timeout(10)
  void aDeadlineEndsTheWaitWithAnEmptyResult() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("ab"));
    long start = System.nanoTime();
    ProcessOutput out = log.read(2, 100, start + SHORT.toNanos());
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(SHORT.toNanos());
    assertThat(out).isEqualTo(new ProcessOutput(2, List.of(), false));
  }

  @Test
  void aPassedDeadlineStillReturnsAvailableOutput() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("ab"));
    long past = System.nanoTime() - 1;
    assertThat(log.read(0, 100, past).bytes()).isEqualTo(b("ab"));
    assertThat(log.read(2, 100, past)).isEqualTo(new ProcessOutput(2, List.of(), false));
  }

  @Test
  @Timeout(10)
  void anInterruptEndsABlockedRead() throws Exception {
    OutputLog log = new OutputLog(0);
    AtomicReference<Thread> reader = new AtomicReference<>();
    CompletableFuture<ProcessOutput> f =
        blockedRead(
            () -> {
              reader.set(Thread.currentThread());
              return log.read(0, 100);
            });
    reader.get().interrupt();
    assertThat(failureOf(f)).isInstanceOf(InterruptedException.class);
  }

  @Test
  void anInterruptedThreadThrowsAtOnceInsteadOfWaiting() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("ab"));
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> log.read(2, 100)).isInstanceOf(InterruptedException.class);
      assertThat(Thread.currentThread().isInterrupted()).isFalse();
      // Available output is returned regardless, and the interrupt stays set for the caller.
      Thread.currentThread().interrupt();
      assertThat(log.read(0, 100).bytes()).isEqualTo(b("ab"));
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  @Timeout(10)
  void theAppendThatWakesAWaitingReaderNeverGapsIt() throws Exception {
    OutputLog log = new OutputLog(2);
    log.append(ProcessStream.STDOUT, b("ab"));
    CompletableFuture<ProcessOutput> f = blockedRead(() -> log.read(2, 100));
    log.append(ProcessStream.STDOUT, b("cdefgh"));
    assertThat(log.retainedFrom()).isEqualTo(2);
    assertThat(f.get(10, TimeUnit.SECONDS).bytes()).isEqualTo(b("cdefgh"));
  }

  // ---- watch ----

  @Test
  void aWatcherGetsTheReplayThenLiveEvents() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("ab"));
    log.append(ProcessStream.STDERR, b("c"));
    EventStream events = log.watch();
    log.append(ProcessStream.STDOUT, b("de"));
    ProcessExit exit = ProcessExit.exited(7);
    log.finish(exit);
    assertThat(drain(events))
        .containsExactly(
            ProcessEvent.output(OutputChunk.of(0, ProcessStream.STDOUT, b("ab"))),
            ProcessEvent.output(OutputChunk.of(2, ProcessStream.STDERR, b("c"))),
            ProcessEvent.output(OutputChunk.of(3, ProcessStream.STDOUT, b("de"))),
            ProcessEvent.exited(5, exit));
  }

  @Test
  void aWatcherOfAFinishedLogGetsTheExitInTheReplay() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.TTY, b("x"));
    log.finish(ProcessExit.exited(2));
    EventStream events = log.watch();
    assertThat(drain(events))
        .containsExactly(
            ProcessEvent.output(OutputChunk.of(0, ProcessStream.TTY, b("x"))),
            ProcessEvent.exited(1, ProcessExit.exited(2)));
  }

  @Test
  void theFirstFinishWins() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    EventStream live = log.watch();
    log.finish(ProcessExit.exited(1));
    log.finish(ProcessExit.exited(2));
    assertThat(drain(live)).containsExactly(ProcessEvent.exited(0, ProcessExit.exited(1)));
    assertThat(drain(log.watch())).containsExactly(ProcessEvent.exited(0, ProcessExit.exited(1)));
  }

  @Test
  @Timeout(10)
  void exitedDoesNotEndTheStreamButClosedDoes() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    EventStream events = log.watch();
    log.append(ProcessStream.STDOUT, b("ab"));
    log.finish(ProcessExit.exited(0));
    assertThat(events.take().type()).isEqualTo(ProcessEvent.Type.OUTPUT);
    assertThat(events.take().type()).isEqualTo(ProcessEvent.Type.EXITED);
    assertThat(events.poll(SHORT)).isNull();
    assertThat(events.isEnded()).isFalse();
    assertThat(log.watcherCount()).isEqualTo(1);
    log.close();
    assertThat(events.isEnded()).isFalse();
    assertThat(events.take()).isEqualTo(ProcessEvent.closed(2));
    assertThat(events.isEnded()).isTrue();
    assertThat(events.take()).isNull();
    assertThat(events.poll(SHORT)).isNull();
    assertThat(log.watcherCount()).isZero();
  }

  @Test
  void closeSendsClosedOnceToEveryWatcher() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    EventStream a = log.watch();
    EventStream b = log.watch();
    log.append(ProcessStream.STDOUT, b("abc"));
    log.close();
    log.close();
    for (EventStream events : List.of(a, b)) {
      assertThat(drain(events))
          .extracting(ProcessEvent::type)
          .containsExactly(ProcessEvent.Type.OUTPUT, ProcessEvent.Type.CLOSED);
      assertThat(events.isEnded()).isTrue();
    }
  }

  @Test
  void watchAfterCloseThrows() {
    OutputLog log = new OutputLog(0);
    log.close();
    assertThatThrownBy(log::watch).isInstanceOf(ProcessClosedException.class);
  }

  @Test
  @Timeout(10)
  void aBlockedTakeIsWokenByAnEvent() throws Exception {
    OutputLog log = new OutputLog(0);
    EventStream events = log.watch();
    CompletableFuture<ProcessEvent> f =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return events.take();
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    Thread.sleep(50);
    assertThat(f).isNotDone();
    log.append(ProcessStream.STDOUT, b("a"));
    assertThat(f.get(10, TimeUnit.SECONDS))
        .isEqualTo(ProcessEvent.output(OutputChunk.of(0, ProcessStream.STDOUT, b("a"))));
  }

  @Test
  @Timeout(10)
  void closingTheStreamDropsItsEventsAndDetachesIt() throws Exception {
    OutputLog log = new OutputLog(0);
    log.append(ProcessStream.STDOUT, b("a"));
    EventStream events = log.watch();
    EventStream other = log.watch();
    assertThat(log.watcherCount()).isEqualTo(2);
    CompletableFuture<ProcessEvent> waiting = new CompletableFuture<>();
    drain(other);
    Thread.ofPlatform()
        .start(
            () -> {
              try {
                waiting.complete(other.take());
              } catch (Throwable e) {
                waiting.completeExceptionally(e);
              }
            });
    Thread.sleep(50);
    events.close();
    other.close();
    other.close();
    assertThat(waiting.get(10, TimeUnit.SECONDS)).isNull();
    assertThat(log.watcherCount()).isZero();
    assertThat(events.isEnded()).isTrue();
    assertThat(events.take()).isNull();
    log.append(ProcessStream.STDOUT, b("b"));
    log.close();
    assertThat(events.poll(Duration.ZERO)).isNull();
  }

  @Test
  void aReplayOfMoreThan256EventsIsASingleLagFromTheRetainedStart() throws InterruptedException {
    OutputLog log = new OutputLog(300);
    appendBytes(log, 310);
    assertThat(log.retainedFrom()).isEqualTo(10);
    EventStream events = log.watch();
    assertThat(drain(events)).containsExactly(ProcessEvent.lag(10));
    assertThat(events.isEnded()).isTrue();
    assertThat(log.watcherCount()).isZero();
  }

  @Test
  @Timeout(10)
  void exactly256ChunksAndAnExitAreTooManyToReplay() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    appendBytes(log, 256);
    log.finish(ProcessExit.exited(0));
    EventStream events = log.watch();
    assertThat(drain(events)).containsExactly(ProcessEvent.lag(0));
    assertThat(events.isEnded()).isTrue();
  }

  @Test
  void aReplayThatFillsTheLastSlotEndsInALagAtTheEventThatDidNotFit() throws InterruptedException {
    OutputLog chunks = new OutputLog(0);
    appendBytes(chunks, 256);
    List<ProcessEvent> replay = drain(chunks.watch());
    assertThat(replay).hasSize(256);
    assertThat(replay.subList(0, 255)).allMatch(e -> e.type() == ProcessEvent.Type.OUTPUT);
    assertThat(replay.getLast()).isEqualTo(ProcessEvent.lag(255));
    assertThat(chunks.watcherCount()).isZero();

    OutputLog exited = new OutputLog(0);
    appendBytes(exited, 255);
    exited.finish(ProcessExit.exited(0));
    List<ProcessEvent> withExit = drain(exited.watch());
    assertThat(withExit).hasSize(256);
    assertThat(withExit.getLast()).isEqualTo(ProcessEvent.lag(255));
  }

  @Test
  void aReplayThatLeavesTheReserveFreeStaysSubscribed() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    appendBytes(log, 254);
    log.finish(ProcessExit.exited(0));
    EventStream events = log.watch();
    assertThat(log.watcherCount()).isEqualTo(1);
    log.close();
    List<ProcessEvent> all = drain(events);
    assertThat(all).hasSize(256);
    assertThat(all.get(254)).isEqualTo(ProcessEvent.exited(254, ProcessExit.exited(0)));
    assertThat(all.getLast()).isEqualTo(ProcessEvent.closed(254));
  }

  @Test
  void aWatcherThatDoesNotKeepUpGets255OutputsAndALag() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    EventStream events = log.watch();
    appendBytes(log, 300);
    List<ProcessEvent> all = drain(events);
    assertThat(all).hasSize(256);
    for (int i = 0; i < 255; i++) {
      assertThat(all.get(i))
          .isEqualTo(
              ProcessEvent.output(OutputChunk.of(i, ProcessStream.STDOUT, new byte[] {(byte) i})));
    }
    assertThat(all.getLast()).isEqualTo(ProcessEvent.lag(255));
    assertThat(all.getLast().seq()).isNotZero();
    assertThat(events.isEnded()).isTrue();
    assertThat(events.take()).isNull();
    assertThat(log.watcherCount()).isZero();
    // The lag's offset is where a read resumes without losing a byte.
    assertThat(log.read(255, 1000).nextSeq()).isEqualTo(300);
  }

  @Test
  @Timeout(10)
  void aWatcherThatKeepsUpNeverLags() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    EventStream events = log.watch();
    for (int i = 0; i < 1000; i++) {
      log.append(ProcessStream.STDOUT, new byte[] {1});
      assertThat(events.take()).extracting(ProcessEvent::seq).isEqualTo((long) i);
    }
    assertThat(events.isEnded()).isFalse();
  }

  @Test
  void anExitThatDoesNotFitBecomesALagAtTheEnd() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    EventStream events = log.watch();
    appendBytes(log, 255);
    log.finish(ProcessExit.exited(0));
    List<ProcessEvent> all = drain(events);
    assertThat(all).hasSize(256);
    assertThat(all.getLast()).isEqualTo(ProcessEvent.lag(255));
  }

  @Test
  void closedFitsIntoTheReservedSlot() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    EventStream events = log.watch();
    appendBytes(log, 255);
    log.close();
    List<ProcessEvent> all = drain(events);
    assertThat(all).hasSize(256);
    assertThat(all.getLast()).isEqualTo(ProcessEvent.closed(255));
  }

  @Test
  @Timeout(10)
  void oneLaggingWatcherDoesNotAffectAnother() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    EventStream slow = log.watch();
    EventStream fast = log.watch();
    for (int i = 0; i < 400; i++) {
      log.append(ProcessStream.STDOUT, new byte[] {1});
      assertThat(fast.take().seq()).isEqualTo(i);
    }
    assertThat(drain(slow).getLast()).isEqualTo(ProcessEvent.lag(255));
    assertThat(log.watcherCount()).isEqualTo(1);
  }

  @Test
  void outputEventsCarryTheChunkAsAppended() throws InterruptedException {
    OutputLog log = new OutputLog(0);
    EventStream events = log.watch();
    log.append(ProcessStream.STDOUT, b("ab"));
    log.append(ProcessStream.TTY, b("cde"));
    ProcessEvent first = events.take();
    ProcessEvent second = events.take();
    assertThat(first.seq()).isZero();
    assertThat(first.chunk()).isEqualTo(OutputChunk.of(0, ProcessStream.STDOUT, b("ab")));
    assertThat(second.seq()).isEqualTo(2);
    assertThat(second.chunk()).isEqualTo(OutputChunk.of(2, ProcessStream.TTY, b("cde")));
  }
}
