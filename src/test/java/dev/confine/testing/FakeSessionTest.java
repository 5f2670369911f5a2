package dev.confine.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ExecOptions;
import dev.confine.ProcessClosedException;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.SequenceGapException;
import dev.confine.session.EventStream;
import dev.confine.session.OutputChunk;
import dev.confine.session.OutputRead;
import dev.confine.session.ProcessEvent;
import dev.confine.session.ProcessEventSource;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSignal;
import dev.confine.session.ProcessSignaler;
import dev.confine.session.ProcessSpec;
import dev.confine.session.ProcessStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class FakeSessionTest {
  private static final List<String> ARGV = List.of("sh", "-c", "x");
  private static final ProcessExit TERMINATED =
      new ProcessExit(-1, 15, ProcessExit.Reason.TERMINATED, null);
  private static final ProcessExit KILLED =
      new ProcessExit(-1, 9, ProcessExit.Reason.SIGNALED, null);

  private static FakeSession pipes() {
    return new FakeSession(ProcessSpec.pipes(ARGV).withId("p"), 7);
  }

  private static FakeSession terminal() {
    return new FakeSession(ProcessSpec.terminal(ARGV).withId("t").withSize(30, 100), 8);
  }

  /** A pipe session whose log holds at most {@code bytes}. */
  private static FakeSession bounded(long bytes) {
    ExecOptions opts =
        ExecOptions.builder()
            .resources(ResourceLimits.builder().maxOutputBytes(bytes).build())
            .build();
    return new FakeSession(ProcessSpec.pipes(ARGV).withId("b").withOptions(opts), 9);
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static OutputChunk chunk(long seq, ProcessStream stream, String text) {
    return OutputChunk.of(seq, stream, ascii(text));
  }

  private static Kind kindOf(Throwable t) {
    return ((SandboxException) t).kind();
  }

  // ---- output and reads ----

  @Test
  void scriptedOutputIsReadBackAsChunksWithTheirOffsetsAndStreams() throws Exception {
    FakeSession s = pipes().stdout("hello ").stderr("oops").stdout(ascii("world"));

    ProcessOutput out = s.read(0, 100);
    assertThat(out.chunks())
        .containsExactly(
            chunk(0, ProcessStream.STDOUT, "hello "),
            chunk(6, ProcessStream.STDERR, "oops"),
            chunk(10, ProcessStream.STDOUT, "world"));
    assertThat(out.nextSeq()).isEqualTo(15);
    assertThat(out.eof()).isFalse();
    assertThat(s.nextSeq()).isEqualTo(15);
    assertThat(s.retainedFrom()).isZero();

    s.exit(0);
    assertThat(s.read(15, 100)).isEqualTo(new ProcessOutput(15, List.of(), true));
    assertThat(s.read(0, 100).eof()).isTrue();
    assertThat(s.read(0, 14).eof()).as("not yet at the end").isFalse();
  }

  @Test
  void aReadStartsInsideAChunkAndIsCutAtMaxBytes() throws Exception {
    FakeSession s = pipes().stdout("abcdef").stdout("ghij");

    assertThat(s.read(2, 5))
        .isEqualTo(
            new ProcessOutput(
                7,
                List.of(
                    chunk(2, ProcessStream.STDOUT, "cdef"), chunk(6, ProcessStream.STDOUT, "g")),
                false));
    s.exit(0);
    assertThat(s.read(7, 3))
        .isEqualTo(new ProcessOutput(10, List.of(chunk(7, ProcessStream.STDOUT, "hij")), true));
  }

  @Test
  void emptyOutputIsNoChunk() throws Exception {
    FakeSession s = pipes().stdout("").stdout(new byte[0]).stdout("a");
    assertThat(s.read(0, 10).chunks()).containsExactly(chunk(0, ProcessStream.STDOUT, "a"));
  }

  @Test
  void theCallersArrayIsCopied() throws Exception {
    byte[] data = ascii("abc");
    FakeSession s = pipes().stdout(data);
    data[0] = 'X';
    assertThat(s.read(0, 10).bytes()).isEqualTo(ascii("abc"));
  }

  @Test
  void aBlockingReadWaitsForLaterOutput() throws Exception {
    FakeSession s = pipes().stdout("ab");
    Background<ProcessOutput> reader = Background.run(() -> s.read(2, 10));
    reader.awaitBlocked();
    assertThat(reader.result).isNotDone();

    s.stderr("cd");
    assertThat(reader.get())
        .isEqualTo(new ProcessOutput(4, List.of(chunk(2, ProcessStream.STDERR, "cd")), false));
  }

  @Test
  void aBlockingReadAtTheEndWaitsForTheExit() throws Exception {
    FakeSession s = pipes().stdout("ab");
    Background<ProcessOutput> reader = Background.run(() -> s.read(2, 10));
    reader.awaitBlocked();
    assertThat(reader.result).isNotDone();

    s.exit(3);
    assertThat(reader.get()).isEqualTo(new ProcessOutput(2, List.of(), true));
  }

  @Test
  void aTimedReadReturnsNothingWhenNothingCameInTime() throws Exception {
    FakeSession s = pipes().stdout("ab");
    long start = System.nanoTime();
    assertThat(s.read(2, 10, Duration.ofMillis(50)))
        .isEqualTo(new ProcessOutput(2, List.of(), false));
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(Duration.ofMillis(50).toNanos());

    assertThat(s.read(2, 10, Duration.ZERO)).isEqualTo(new ProcessOutput(2, List.of(), false));
    assertThat(s.read(2, 10, Duration.ofMillis(-5)))
        .isEqualTo(new ProcessOutput(2, List.of(), false));
    // Output that is there is returned whatever the timeout.
    assertThat(s.read(0, 10, Duration.ZERO).bytes()).isEqualTo(ascii("ab"));
  }

  @Test
  void aTimedReadReturnsOutputThatComesInTime() throws Exception {
    FakeSession s = pipes();
    Background<ProcessOutput> reader = Background.run(() -> s.read(0, 10, Duration.ofSeconds(20)));
    reader.awaitBlocked();
    s.stdout("late");
    assertThat(reader.get().bytes()).isEqualTo(ascii("late"));
  }

  @Test
  void anInterruptEndsABlockedRead() throws Exception {
    FakeSession s = pipes();
    Background<ProcessOutput> reader = Background.run(() -> s.read(0, 10));
    reader.awaitBlocked();
    reader.thread.interrupt();
    assertThatThrownBy(reader::get).hasCauseInstanceOf(InterruptedException.class);

    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> s.read(0, 10, Duration.ofSeconds(10)))
          .isInstanceOf(InterruptedException.class);
    } finally {
      Thread.interrupted();
    }
    // Output that is there is returned even to an interrupted thread.
    s.stdout("x");
    Thread.currentThread().interrupt();
    try {
      assertThat(s.read(0, 10).bytes()).isEqualTo(ascii("x"));
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void readsCheckTheirArgumentsAsTheRealSessionsDo() {
    FakeSession s = pipes().stdout("abc");
    assertThatThrownBy(() -> s.read(0, 0))
        .extracting(FakeSessionTest::kindOf)
        .isEqualTo(Kind.VALIDATION);
    assertThatThrownBy(() -> s.read(4, 10))
        .hasMessageContaining("afterSeq 4 is beyond buffered output (next=3)")
        .extracting(FakeSessionTest::kindOf)
        .isEqualTo(Kind.VALIDATION);
    assertThatThrownBy(() -> s.read(-1, 10))
        .isInstanceOfSatisfying(
            SequenceGapException.class, e -> assertThat(e.retainedFrom()).isZero());
    assertThatThrownBy(() -> s.read(0, ByteBuffer.allocate(0)))
        .extracting(FakeSessionTest::kindOf)
        .isEqualTo(Kind.VALIDATION);
  }

  @Test
  void theLogDropsTheOldestWholeChunksBeyondTheSpecsBoundAndReadsOfThemAreGaps() throws Exception {
    FakeSession s = bounded(10).stdout("01234").stdout("56789");
    assertThat(s.retainedFrom()).isZero();

    s.stdout("abc");
    assertThat(s.retainedFrom()).isEqualTo(5);
    assertThat(s.nextSeq()).isEqualTo(13);
    assertThatThrownBy(() -> s.read(4, 10))
        .isInstanceOfSatisfying(
            SequenceGapException.class,
            e -> {
              assertThat(e.afterSeq()).isEqualTo(4);
              assertThat(e.retainedFrom()).isEqualTo(5);
              assertThat(kindOf(e)).isEqualTo(Kind.NOT_FOUND);
            });
    assertThat(s.read(5, 100).bytes()).isEqualTo(ascii("56789abc"));

    // The newest chunk stays, however large.
    s.stdout("0123456789ABCDEF");
    assertThat(s.retainedFrom()).isEqualTo(13);
    assertThat(s.read(13, 100).bytes()).isEqualTo(ascii("0123456789ABCDEF"));
  }

  @Test
  void withoutABoundTheLogHoldsTenMebibytes() throws Exception {
    FakeSession s = pipes();
    byte[] mib = new byte[1 << 20];
    for (int i = 0; i < 10; i++) {
      s.stdout(mib);
    }
    assertThat(s.retainedFrom()).isZero();
    s.stdout("x");
    assertThat(s.retainedFrom()).isEqualTo(1 << 20);
    assertThat(FakeSession.DEFAULT_MAX_LOG_BYTES).isEqualTo(10L << 20);
  }

  @Test
  void aSessionWritesOnlyTheStreamsOfItsKind() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> pipes().tty("x"))
        .withMessage("a pipe session has no tty output");
    assertThatIllegalArgumentException().isThrownBy(() -> terminal().stdout("x"));
    assertThatIllegalArgumentException().isThrownBy(() -> terminal().stderr("x"));
  }

  @Test
  void outputAfterTheEndIsDropped() throws Exception {
    FakeSession s = pipes().stdout("a").exit(0).stdout("b");
    assertThat(s.read(0, 10))
        .isEqualTo(new ProcessOutput(1, List.of(chunk(0, ProcessStream.STDOUT, "a")), true));
    assertThat(s.nextSeq()).isEqualTo(1);
  }

  @Test
  void aBufferReadCopiesConsecutiveChunksOfOneStream() throws Exception {
    FakeSession s = pipes().stdout("ab").stdout("cd").stderr("EF");
    ByteBuffer into = ByteBuffer.allocate(16);

    assertThat(s.read(1, into)).isEqualTo(new OutputRead(4, 3, ProcessStream.STDOUT, false));
    assertThat(into.flip()).isEqualTo(ByteBuffer.wrap(ascii("bcd")));
    s.exit(0);
    into.clear();
    assertThat(s.read(4, into, Duration.ZERO))
        .isEqualTo(new OutputRead(6, 2, ProcessStream.STDERR, true));
  }

  // ---- exit and waiting ----

  @Test
  void theFirstEndCounts() throws Exception {
    FakeSession s = pipes();
    assertThat(s.exitValue()).isEmpty();
    assertThat(s.waitFor(Duration.ofMillis(20))).isEmpty();

    s.exit(3).exit(4).exit(TERMINATED);
    assertThat(s.exitValue()).contains(ProcessExit.exited(3));
    assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(3));
    assertThat(s.waitFor(Duration.ZERO)).contains(ProcessExit.exited(3));
  }

  @Test
  void waitForWaitsForTheEnd() throws Exception {
    FakeSession s = pipes();
    Background<ProcessExit> waiter = Background.run(s::waitFor);
    Background<Optional<ProcessExit>> timed =
        Background.run(() -> s.waitFor(Duration.ofSeconds(20)));
    waiter.awaitBlocked();
    timed.awaitBlocked();
    assertThat(waiter.result).isNotDone();

    ProcessExit end = new ProcessExit(-1, 2, ProcessExit.Reason.SIGNALED, null);
    s.exit(end);
    assertThat(waiter.get()).isEqualTo(end);
    assertThat(timed.get()).contains(end);
  }

  // ---- stdin ----

  @Test
  void whatIsWrittenIsRecorded() throws Exception {
    FakeSession s = pipes();
    s.write(ascii("ls\n"));
    s.write(new byte[] {0, (byte) 0xff});
    s.write(new byte[0]);
    s.write(null);

    assertThat(s.stdin()).isEqualTo(new byte[] {'l', 's', '\n', 0, (byte) 0xff});
    assertThat(s.stdinText()).startsWith("ls\n");
    assertThat(s.isStdinClosed()).isFalse();
    assertThat(s.calls()).hasSize(4).first().isEqualTo("write:ls\n");
  }

  @Test
  void aPipeSessionRefusesWritesOnceItsStdinIsClosedOrItEnded() throws Exception {
    FakeSession s = pipes();
    s.write(ascii("a"));
    s.closeStdin();
    assertThat(s.isStdinClosed()).isTrue();
    assertThatThrownBy(() -> s.write(ascii("b")))
        .extracting(FakeSessionTest::kindOf)
        .isEqualTo(Kind.INTERNAL);
    s.write(new byte[0]); // nothing to write: fine
    assertThat(s.stdinText()).isEqualTo("a");

    FakeSession ended = pipes().exit(0);
    assertThatThrownBy(() -> ended.write(ascii("b")))
        .extracting(FakeSessionTest::kindOf)
        .isEqualTo(Kind.INTERNAL);
  }

  @Test
  void aTerminalStaysWritableAfterCtrlD() throws Exception {
    FakeSession s = terminal();
    s.closeStdin();
    s.write(ascii("more"));
    assertThat(s.isStdinClosed()).isTrue();
    assertThat(s.stdinText()).isEqualTo("more");
  }

  @Test
  void reactionsLetTheTestAnswerLikeTheProgramWould() throws Exception {
    FakeSession cat = pipes();
    cat.onWrite(cat::stdout).onCloseStdin(() -> cat.exit(0));

    cat.write(ascii("hi "));
    cat.write(ascii("there"));
    cat.closeStdin();

    assertThat(cat.waitFor()).isEqualTo(ProcessExit.exited(0));
    assertThat(SessionReads.readAll(cat)).isEqualTo("hi there");

    FakeSession shell = terminal();
    List<ProcessSignal> got = new ArrayList<>();
    shell.onSignal(
        sig -> {
          got.add(sig);
          shell.tty("^C\n").exit(new ProcessExit(-1, 2, ProcessExit.Reason.SIGNALED, null));
        });
    shell.signal(ProcessSignal.INTERRUPT);
    assertThat(got).containsExactly(ProcessSignal.INTERRUPT);
    assertThat(shell.exitValue().orElseThrow().signal()).isEqualTo(2);
    assertThat(shell.read(0, 10).bytes()).isEqualTo(ascii("^C\n"));
  }

  // ---- resize, signal, terminate ----

  @Test
  void resizeChangesATerminalsSizeAndIsRefusedForPipes() {
    FakeSession t = terminal();
    assertThat(t.rows()).isEqualTo(30);
    assertThat(t.cols()).isEqualTo(100);
    t.resize(40, 120);
    assertThat(t.rows()).isEqualTo(40);
    assertThat(t.cols()).isEqualTo(120);
    assertThatThrownBy(() -> t.resize(0, 80))
        .extracting(FakeSessionTest::kindOf)
        .isEqualTo(Kind.VALIDATION);
    assertThat(t.rows()).isEqualTo(40);

    FakeSession p = pipes();
    assertThatThrownBy(() -> p.resize(40, 120))
        .hasMessage("sandbox: Resize requires a TTY session")
        .extracting(FakeSessionTest::kindOf)
        .isEqualTo(Kind.NOT_AVAILABLE);
    p.close();
    // The dimensions are checked first, as the real sessions do.
    assertThatThrownBy(() -> p.resize(-1, 1))
        .extracting(FakeSessionTest::kindOf)
        .isEqualTo(Kind.VALIDATION);
    assertThatThrownBy(() -> p.resize(1, 1)).isInstanceOf(ProcessClosedException.class);
  }

  @Test
  void aSignalIsRecordedAndEndsNothingByItselfButIsRefusedOnceTheProcessEnded() {
    FakeSession s = pipes();
    s.signal(ProcessSignal.INTERRUPT);
    assertThat(s.exitValue()).isEmpty();
    assertThat(s.calls()).containsExactly("signal:interrupt");

    assertThatThrownBy(() -> s.signal(null))
        .extracting(FakeSessionTest::kindOf)
        .isEqualTo(Kind.NOT_AVAILABLE);
    s.exit(0);
    assertThatThrownBy(() -> s.signal(ProcessSignal.INTERRUPT))
        .isInstanceOf(ProcessClosedException.class);
  }

  @Test
  void terminateEndsTheProcessAsTerminatedAndWakesItsReadersAndWaiters() throws Exception {
    FakeSession s = pipes().stdout("x");
    Background<ProcessOutput> reader = Background.run(() -> s.read(1, 10));
    Background<ProcessExit> waiter = Background.run(s::waitFor);
    reader.awaitBlocked();
    waiter.awaitBlocked();

    s.terminate();
    assertThat(waiter.get()).isEqualTo(TERMINATED);
    assertThat(reader.get()).isEqualTo(new ProcessOutput(1, List.of(), true));

    s.terminate(); // ended already: nothing happens
    assertThat(s.exitValue()).contains(TERMINATED);
  }

  @Test
  void terminateOfAnEndedProcessLeavesItsExit() {
    FakeSession s = pipes().exit(0);
    s.terminate();
    assertThat(s.exitValue()).contains(ProcessExit.exited(0));
  }

  @Test
  void aSessionCanBeToldToOutliveOrFailTerminate() {
    FakeSession stubborn = pipes().ignoreTerminate();
    stubborn.terminate();
    assertThat(stubborn.exitValue()).isEmpty();

    SandboxException failure = new SandboxException(Kind.INTERNAL, "kill failed");
    FakeSession failing = pipes().failTerminate(failure);
    assertThatThrownBy(failing::terminate).isSameAs(failure);
    assertThat(failing.exitValue()).isEmpty();
    failing.failTerminate(null).terminate();
    assertThat(failing.exitValue()).contains(TERMINATED);
    assertThat(failing.calls()).containsExactly("terminate", "terminate");
  }

  // ---- close ----

  @Test
  void closeKillsARunningProcessAndThenRefusesEverythingButTheExitAndTheIds() throws Exception {
    FakeSession s = terminal().tty("out");
    s.close();

    assertThat(s.isClosed()).isTrue();
    assertThat(s.exitValue()).contains(KILLED);
    assertThat(s.waitFor()).isEqualTo(KILLED);
    assertThat(s.waitFor(Duration.ZERO)).contains(KILLED);
    assertThat(s.id()).isEqualTo("t");
    assertThat(s.pid()).isEqualTo(8);
    List<ThrowingCall> refused =
        List.of(
            () -> s.read(0, 10),
            () -> s.read(0, 10, Duration.ZERO),
            () -> s.read(0, ByteBuffer.allocate(4)),
            () -> s.write(ascii("x")),
            () -> s.write(new byte[0]),
            s::closeStdin,
            () -> s.resize(1, 1),
            s::terminate,
            () -> s.signal(ProcessSignal.INTERRUPT),
            s::watch);
    for (ThrowingCall call : refused) {
      assertThatThrownBy(call::run)
          .isInstanceOf(ProcessClosedException.class)
          .extracting(FakeSessionTest::kindOf)
          .isEqualTo(Kind.CONFLICT);
    }
    s.exit(0); // a later end changes nothing
    assertThat(s.exitValue()).contains(KILLED);
    s.close(); // idempotent
    assertThat(s.exitValue()).contains(KILLED);
  }

  @Test
  void closeKeepsAnEarlierExit() {
    FakeSession s = pipes().exit(5);
    s.close();
    assertThat(s.exitValue()).contains(ProcessExit.exited(5));
  }

  @Test
  void closeWakesABlockedReaderWithProcessClosedException() throws Exception {
    FakeSession s = pipes();
    Background<ProcessOutput> reader = Background.run(() -> s.read(0, 10));
    Background<ProcessOutput> timed = Background.run(() -> s.read(0, 10, Duration.ofSeconds(20)));
    reader.awaitBlocked();
    timed.awaitBlocked();

    s.close();
    assertThatThrownBy(reader::get).hasCauseInstanceOf(ProcessClosedException.class);
    assertThatThrownBy(timed::get).hasCauseInstanceOf(ProcessClosedException.class);
  }

  @Test
  void aScriptedCloseFailureComesAfterTheClose() {
    SandboxException failure = new SandboxException(Kind.INTERNAL, "close failed");
    FakeSession s = pipes().failClose(failure);
    assertThatThrownBy(s::close).isSameAs(failure);
    assertThat(s.isClosed()).isTrue();
    assertThat(s.exitValue()).contains(KILLED);
    s.failClose(null).close();
    assertThat(s.calls()).containsExactly("close", "close");
  }

  // ---- watch ----

  @Test
  void aWatcherGetsTheRetainedOutputThenLiveEventsThenClosed() throws Exception {
    FakeSession s = pipes().stdout("ab");
    EventStream events = s.watch();

    assertThat(events.poll(Duration.ZERO))
        .isEqualTo(ProcessEvent.output(chunk(0, ProcessStream.STDOUT, "ab")));
    assertThat(events.poll(Duration.ofMillis(10))).isNull();
    assertThat(events.isEnded()).isFalse();

    Background<ProcessEvent> taker = Background.run(events::take);
    taker.awaitBlocked();
    s.stderr("c");
    assertThat(taker.get()).isEqualTo(ProcessEvent.output(chunk(2, ProcessStream.STDERR, "c")));

    s.exit(1);
    assertThat(events.take()).isEqualTo(ProcessEvent.exited(3, ProcessExit.exited(1)));
    assertThat(events.isEnded()).as("EXITED does not end the stream").isFalse();
    s.close();
    assertThat(events.take()).isEqualTo(ProcessEvent.closed(3));
    assertThat(events.take()).isNull();
    assertThat(events.isEnded()).isTrue();
  }

  @Test
  void aWatcherOfAnEndedSessionGetsItsOutputAndItsExit() throws Exception {
    FakeSession s = pipes().stdout("a").stdout("b").exit(0);
    try (EventStream events = s.watch()) {
      assertThat(events.take()).isEqualTo(ProcessEvent.output(chunk(0, ProcessStream.STDOUT, "a")));
      assertThat(events.take()).isEqualTo(ProcessEvent.output(chunk(1, ProcessStream.STDOUT, "b")));
      assertThat(events.take()).isEqualTo(ProcessEvent.exited(2, ProcessExit.exited(0)));
      assertThat(events.poll(Duration.ZERO)).isNull();
    }
  }

  @Test
  void closeOfTheSessionEndsABlockedTake() throws Exception {
    FakeSession s = pipes();
    EventStream events = s.watch();
    Background<List<ProcessEvent>> taker =
        Background.run(
            () -> {
              List<ProcessEvent> got = new ArrayList<>();
              for (ProcessEvent e = events.take(); e != null; e = events.take()) {
                got.add(e);
              }
              return got;
            });
    taker.awaitBlocked();
    s.close();
    assertThat(taker.get()).containsExactly(ProcessEvent.exited(0, KILLED), ProcessEvent.closed(0));
  }

  @Test
  void aWatcherThatFallsBehindGetsALagAtTheFirstByteItMissed() throws Exception {
    FakeSession s = pipes();
    EventStream events = s.watch();
    for (int i = 0; i < 300; i++) {
      s.stdout("x");
    }
    List<ProcessEvent> got = new ArrayList<>();
    // Polled, not taken: a stream that never ends fails here instead of hanging.
    for (ProcessEvent e = events.poll(Duration.ofSeconds(1));
        e != null;
        e = events.poll(Duration.ofSeconds(1))) {
      got.add(e);
    }
    assertThat(got).hasSize(256); // EventStream's bound
    assertThat(got.subList(0, 255)).allMatch(e -> e.type() == ProcessEvent.Type.OUTPUT);
    assertThat(got.get(255)).isEqualTo(ProcessEvent.lag(255));
    assertThat(events.isEnded()).isTrue();
  }

  @Test
  void aReplayOfMoreThan256EventsIsASingleLag() throws Exception {
    FakeSession s = bounded(800);
    for (int i = 0; i < 300; i++) {
      s.stdout("xyz");
    }
    // 900 bytes written, 266 chunks (798 bytes) retained: more than a watcher holds.
    assertThat(s.retainedFrom()).isEqualTo(102);
    try (EventStream events = s.watch()) {
      assertThat(events.take()).isEqualTo(ProcessEvent.lag(s.retainedFrom()));
      assertThat(events.take()).isNull();
    }
  }

  @Test
  void aClosedWatcherGetsNothingMore() throws Exception {
    FakeSession s = pipes();
    EventStream events = s.watch();
    events.close();
    s.stdout("a");
    assertThat(events.poll(Duration.ZERO)).isNull();
    assertThat(events.isEnded()).isTrue();
    events.close();
  }

  // ---- the plain view, the record of calls ----

  @Test
  void thePlainViewHasNeitherCapabilityAndIsTheSameSession() throws Exception {
    FakeSession s = pipes().stdout("a");
    ProcessSession plain = s.asPlainSession();

    assertThat(ProcessSignaler.of(plain)).isEmpty();
    assertThat(ProcessEventSource.of(plain)).isEmpty();
    assertThat(ProcessSignaler.of(s)).containsSame(s);
    assertThat(ProcessEventSource.of(s)).containsSame(s);
    assertThat(plain.id()).isEqualTo("p");
    assertThat(plain.pid()).isEqualTo(7);
    assertThat(plain.read(0, 10).bytes()).isEqualTo(ascii("a"));
    plain.write(ascii("in"));
    plain.terminate();
    assertThat(plain.exitValue()).contains(TERMINATED);
    plain.close();
    assertThat(s.isClosed()).isTrue();
    assertThat(s.stdinText()).isEqualTo("in");
    assertThat(s.calls()).containsExactly("read:0:10", "write:in", "terminate", "close");
  }

  @Test
  void everyCallIsRecordedInOrderFailedOnesIncluded() throws Exception {
    FakeSession s = terminal().tty("0123456789");
    s.read(5, 10);
    s.read(6, 11, Duration.ofMillis(3));
    s.read(7, ByteBuffer.allocate(4));
    s.read(8, ByteBuffer.allocate(5), Duration.ofMillis(2));
    s.write(ascii("hi"));
    s.closeStdin();
    s.resize(40, 120);
    s.signal(ProcessSignal.INTERRUPT);
    s.waitFor(Duration.ofMillis(1));
    s.watch().close();
    s.terminate();
    s.waitFor();
    s.exitValue();
    s.id();
    s.pid();
    s.close();
    assertThatThrownBy(() -> s.read(0, 1)).isInstanceOf(ProcessClosedException.class);

    assertThat(s.calls())
        .containsExactly(
            "read:5:10",
            "read:6:11:PT0.003S",
            "read:7:4",
            "read:8:5:PT0.002S",
            "write:hi",
            "closeStdin",
            "resize:40x120",
            "signal:interrupt",
            "waitFor:PT0.001S",
            "watch",
            "terminate",
            "waitFor",
            "close",
            "read:0:1");
  }

  @Test
  void theSessionHasTheSpecsIdAndSize() {
    ProcessSpec spec = new ProcessSpec("", ARGV, true, 0, 0, null);
    FakeSession s = new FakeSession(spec, 1);
    assertThat(s.spec()).isSameAs(spec);
    assertThat(s.id()).isEmpty();
    assertThat(s.rows()).isEqualTo(ProcessSpec.DEFAULT_ROWS);
    assertThat(s.cols()).isEqualTo(ProcessSpec.DEFAULT_COLS);
    assertThat(s.toString()).isEqualTo("FakeSession[, sh]");
  }

  // ---- threads ----

  @Test
  void aReaderSeesEveryByteOfConcurrentWritersInOrder() throws Exception {
    FakeSession s = pipes();
    int writers = 4;
    int chunks = 500;
    ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
    try {
      CountDownLatch go = new CountDownLatch(1);
      Future<byte[]> all =
          pool.submit(
              () -> {
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                long cursor = 0;
                while (true) {
                  ProcessOutput out = s.read(cursor, 7);
                  for (OutputChunk c : out.chunks()) {
                    assertThat(c.seq()).isEqualTo(got.size());
                    got.write(c.data());
                  }
                  cursor = out.nextSeq();
                  if (out.eof()) {
                    return got.toByteArray();
                  }
                }
              });
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        byte letter = (byte) ('a' + w);
        done.add(
            pool.submit(
                () -> {
                  go.await();
                  for (int i = 0; i < chunks; i++) {
                    s.stdout(new byte[] {letter, letter});
                    s.write(new byte[] {letter});
                  }
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(20, TimeUnit.SECONDS);
      }
      s.exit(0);
      byte[] got = all.get(20, TimeUnit.SECONDS);
      assertThat(got).hasSize(writers * chunks * 2);
      for (int w = 0; w < writers; w++) {
        byte letter = (byte) ('a' + w);
        assertThat(count(got, letter)).isEqualTo(2 * chunks);
        assertThat(count(s.stdin(), letter)).isEqualTo(chunks);
      }
      for (int i = 0; i < got.length; i += 2) {
        assertThat(got[i + 1]).as("chunks are never split or interleaved").isEqualTo(got[i]);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static int count(byte[] bytes, byte b) {
    int n = 0;
    for (byte x : bytes) {
      if (x == b) {
        n++;
      }
    }
    return n;
  }

  /** A call that may throw anything. */
  @FunctionalInterface
  private interface ThrowingCall {
    void run() throws Exception;
  }

  /** A task on a thread of its own, so that the test can see it block. */
  private static final class Background<T> {
    final Thread thread;
    final CompletableFuture<T> result = new CompletableFuture<>();

    private Background(Callable<T> task) {
      thread =
          new Thread(
              () -> {
                try {
                  result.complete(task.call());
                } catch (Throwable t) {
                  result.completeExceptionally(t);
                }
              },
              "fake-session-test");
      thread.setDaemon(true);
    }

    static <T> Background<T> run(Callable<T> task) {
      Background<T> b = new Background<>(task);
      b.thread.start();
      return b;
    }

    /** Waits until the thread waits (or has finished, which the caller's assertions catch). */
    void awaitBlocked() throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (true) {
        Thread.State state = thread.getState();
        if (state == Thread.State.WAITING
            || state == Thread.State.TIMED_WAITING
            || state == Thread.State.TERMINATED) {
          return;
        }
        if (System.nanoTime() - deadline > 0) {
          throw new AssertionError("the task never blocked: " + state);
        }
        Thread.sleep(1);
      }
    }

    T get() throws InterruptedException, ExecutionException {
      try {
        return result.get(10, TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        throw new AssertionError("the task did not finish", e);
      }
    }
  }
}
