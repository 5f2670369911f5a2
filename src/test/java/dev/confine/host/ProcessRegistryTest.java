package dev.confine.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ProcessClosedException;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.session.EventStream;
import dev.confine.session.OutputChunk;
import dev.confine.session.OutputRead;
import dev.confine.session.ProcessEvent;
import dev.confine.session.ProcessEventSource;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessInfo;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSignal;
import dev.confine.session.ProcessSignaler;
import dev.confine.session.ProcessSpec;
import dev.confine.session.ProcessStream;
import dev.confine.testing.FakeSession;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ProcessRegistryTest {
  private static final List<String> ARGV = List.of("sh", "-c", "sleep 100");

  /** Every spec the starter received and every session it made, in order. */
  private final List<ProcessSpec> specs = new CopyOnWriteArrayList<>();

  private final List<FakeSession> sessions = new CopyOnWriteArrayList<>();
  private final AtomicInteger nextPid = new AtomicInteger(100);

  private ProcessRegistry registry() {
    return registry(
        spec -> new FakeSession(spec.withId("inner-" + spec.id()), nextPid.getAndIncrement()));
  }

  /** A registry whose starter records the spec and the session {@code make} returns. */
  private ProcessRegistry registry(Function<ProcessSpec, FakeSession> make) {
    return registry(make, s -> s);
  }

  /**
   * A registry whose starter records the spec and the session {@code make} returns, and hands the
   * registry {@code view} of it.
   */
  private ProcessRegistry registry(
      Function<ProcessSpec, FakeSession> make, Function<FakeSession, ProcessSession> view) {
    return new ProcessRegistry(
        spec -> {
          specs.add(spec);
          FakeSession s = make.apply(spec);
          if (s == null) {
            return null;
          }
          sessions.add(s);
          return view.apply(s);
        });
  }

  private static ProcessSpec spec(String id) {
    return new ProcessSpec(id, ARGV, false, 0, 0, null);
  }

  private static SandboxException.Kind kindOf(Throwable t) {
    return ((SandboxException) t).kind();
  }

  private static List<String> ids(List<ProcessInfo> infos) {
    return infos.stream().map(ProcessInfo::id).toList();
  }

  // ---- start ----

  @Test
  void withoutAStarterEveryStartIsNotAvailable() {
    ProcessRegistry r = new ProcessRegistry(null);
    assertThatThrownBy(() -> r.start(spec("a")))
        .isInstanceOf(SandboxException.class)
        .hasMessage("sandbox: process starter not configured")
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.NOT_AVAILABLE);
    assertThatThrownBy(() -> r.start(ProcessSpec.pipes(ARGV)))
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.NOT_AVAILABLE);
    assertThat(r.list()).isEmpty();
  }

  @Test
  void anEmptyIdIsGeneratedAndTheStarterSeesTheResolvedId() {
    ProcessRegistry r = registry();
    ProcessSession h = r.start(new ProcessSpec(null, ARGV, true, 30, 100, null));

    assertThat(h.id()).matches("[0-9a-v]{20}");
    assertThat(specs).hasSize(1);
    ProcessSpec got = specs.get(0);
    assertThat(got.id()).isEqualTo(h.id());
    assertThat(got).isEqualTo(new ProcessSpec(h.id(), ARGV, true, 30, 100, null));
    assertThat(ids(r.list())).containsExactly(h.id());
  }

  @Test
  void aGivenIdIsKeptAndTheHandleReportsItWhateverTheSessionCallsItself() {
    ProcessRegistry r = registry();
    ProcessSession h = r.start(spec("build-1"));
    assertThat(specs.get(0).id()).isEqualTo("build-1");
    assertThat(sessions.get(0).id()).isEqualTo("inner-build-1");
    assertThat(h.id()).isEqualTo("build-1");
  }

  @Test
  void anOpenIdConflictsEvenAfterItsProcessEndedUntilTheHandleIsClosed() {
    ProcessRegistry r = registry();
    ProcessSession h = r.start(spec("x"));

    assertThatThrownBy(() -> r.start(spec("x")))
        .hasMessage("sandbox: process id \"x\" already exists")
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.CONFLICT);

    sessions.get(0).exit(ProcessExit.exited(0));
    assertThatThrownBy(() -> r.start(spec("x")))
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.CONFLICT);
    assertThat(specs).hasSize(1); // the starter was never asked for the duplicates

    h.close();
    ProcessSession again = r.start(spec("x"));
    assertThat(again.id()).isEqualTo("x");
    assertThat(specs).hasSize(2);
    assertThat(r.list()).singleElement().extracting(ProcessInfo::running).isEqualTo(true);
  }

  @Test
  void theConflictMessageQuotesTheIdSafely() {
    ProcessRegistry r = registry();
    r.start(spec("a\"b\n"));
    assertThatThrownBy(() -> r.start(spec("a\"b\n")))
        .hasMessage("sandbox: process id \"a\\\"b\\n\" already exists");
  }

  @Test
  void aStarterFailureReleasesTheIdAndIsRethrownAsItIs() {
    SandboxException refused = new SandboxException(Kind.POLICY_DENIED, "no");
    IllegalStateException bug = new IllegalStateException("bug");
    AtomicReference<RuntimeException> failure = new AtomicReference<>(refused);
    ProcessRegistry r =
        registry(
            spec -> {
              RuntimeException f = failure.get();
              if (f != null) {
                throw f;
              }
              return new FakeSession(spec, 7);
            });

    assertThatThrownBy(() -> r.start(spec("x"))).isSameAs(refused);
    assertThat(r.list()).isEmpty();
    failure.set(bug);
    assertThatThrownBy(() -> r.start(spec("x"))).isSameAs(bug);
    assertThat(r.list()).isEmpty();

    failure.set(null);
    assertThat(r.start(spec("x")).pid()).isEqualTo(7);
  }

  @Test
  void aStarterThatReturnsNoSessionIsInternalAndReleasesTheId() {
    AtomicInteger calls = new AtomicInteger();
    ProcessRegistry r =
        registry(spec -> calls.getAndIncrement() == 0 ? null : new FakeSession(spec, 1));

    assertThatThrownBy(() -> r.start(spec("x")))
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.INTERNAL);
    assertThat(r.list()).isEmpty();
    assertThat(r.start(spec("x")).id()).isEqualTo("x");
  }

  @Test
  void startedAtIsTakenBeforeSpawning() {
    AtomicReference<Instant> spawnedAt = new AtomicReference<>();
    ProcessRegistry r =
        registry(
            spec -> {
              sleep(5);
              spawnedAt.set(Instant.now());
              return new FakeSession(spec, 1);
            });
    Instant before = Instant.now();
    r.start(spec("x"));

    Instant startedAt = r.list().get(0).startedAt();
    assertThat(startedAt).isBetween(before, spawnedAt.get());
    assertThat(startedAt).isBefore(spawnedAt.get());
  }

  // ---- spawning ----

  @Test
  void aSessionBeingSpawnedIsListedReservedAndNotYetTerminable() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ProcessRegistry r =
        registry(
            spec -> {
              entered.countDown();
              await(release);
              return new FakeSession(spec, 4242);
            });
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<ProcessSession> starting = pool.submit(() -> r.start(spec("slow")));
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

      ProcessInfo info = r.list().get(0);
      assertThat(info.id()).isEqualTo("slow");
      assertThat(info.pid()).isZero();
      assertThat(info.running()).isTrue();
      assertThat(info.exit()).isNull();
      assertThat(info.argv()).isEqualTo(ARGV);

      assertThatThrownBy(() -> r.terminate("slow"))
          .hasMessage("sandbox: process \"slow\" is still starting")
          .extracting(ProcessRegistryTest::kindOf)
          .isEqualTo(Kind.NOT_AVAILABLE);
      assertThatThrownBy(() -> r.start(spec("slow")))
          .extracting(ProcessRegistryTest::kindOf)
          .isEqualTo(Kind.CONFLICT);

      release.countDown();
      ProcessSession h = starting.get(10, TimeUnit.SECONDS);
      assertThat(h.pid()).isEqualTo(4242);
      assertThat(r.list().get(0).pid()).isEqualTo(4242);
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  // ---- list ----

  @Test
  void listReportsPidArgvTtyAndDerivesRunningAndExitFromTheSession() {
    ProcessRegistry r = registry();
    ProcessSession h = r.start(new ProcessSpec("t", ARGV, true, 0, 0, null));

    ProcessInfo running = r.list().get(0);
    assertThat(running.pid()).isEqualTo(h.pid()).isEqualTo(100);
    assertThat(running.argv()).isEqualTo(ARGV);
    assertThat(running.tty()).isTrue();
    assertThat(running.running()).isTrue();
    assertThat(running.exit()).isNull();

    ProcessExit exit = ProcessExit.exited(3);
    sessions.get(0).exit(exit);
    ProcessInfo ended = r.list().get(0);
    assertThat(ended.running()).isFalse();
    assertThat(ended.exit()).isEqualTo(exit);
    assertThat(ended.startedAt()).isEqualTo(running.startedAt());
  }

  @Test
  void listIsSortedByStartTimeThenByIdAndIsASnapshot() {
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    AtomicReference<Instant> now = new AtomicReference<>(t0);
    ProcessRegistry r = new ProcessRegistry(spec -> new FakeSession(spec, 1), () -> now.get());

    now.set(t0.plusSeconds(2));
    r.start(spec("a"));
    now.set(t0);
    r.start(spec("c"));
    r.start(spec("b"));
    now.set(t0.plusSeconds(1));
    ProcessSession z = r.start(spec("z"));

    List<ProcessInfo> snapshot = r.list();
    assertThat(ids(snapshot)).containsExactly("b", "c", "z", "a");
    assertThat(snapshot.get(0).startedAt()).isEqualTo(t0);

    z.close();
    assertThat(ids(snapshot)).containsExactly("b", "c", "z", "a");
    assertThat(ids(r.list())).containsExactly("b", "c", "a");
    assertThatThrownBy(() -> snapshot.remove(0)).isInstanceOf(UnsupportedOperationException.class);
  }

  // ---- terminate ----

  @Test
  void terminatingAnUnknownIdIsNotFound() {
    ProcessRegistry r = registry();
    assertThatThrownBy(() -> r.terminate("nope"))
        .hasMessage("sandbox: unknown process id \"nope\"")
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.NOT_FOUND);
    assertThatThrownBy(() -> r.terminate(null))
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.NOT_FOUND);
  }

  @Test
  void terminateEndsTheSessionThenWaitsUpToTenSeconds() {
    ProcessRegistry r = registry();
    r.start(spec("x"));
    r.terminate("x");

    assertThat(sessions.get(0).calls()).containsExactly("terminate", "waitFor:PT10S");
    ProcessInfo info = r.list().get(0);
    assertThat(info.running()).isFalse();
    assertThat(info.exit().reason()).isEqualTo(ProcessExit.Reason.TERMINATED);
  }

  @Test
  void terminatingAnEndedSessionDoesNothing() {
    ProcessRegistry r = registry();
    r.start(spec("x"));
    sessions.get(0).exit(ProcessExit.exited(0));

    r.terminate("x");
    assertThat(sessions.get(0).calls()).isEmpty();
    assertThat(r.list().get(0).exit()).isEqualTo(ProcessExit.exited(0));
  }

  @Test
  void theSessionsTerminateFailureIsRethrownAsItIsWithoutWaiting() {
    ProcessRegistry r = registry();
    r.start(spec("x"));
    SandboxException failure = new SandboxException(Kind.INTERNAL, "kill failed");
    sessions.get(0).failTerminate(failure);

    assertThatThrownBy(() -> r.terminate("x")).isSameAs(failure);
    assertThat(sessions.get(0).calls()).containsExactly("terminate");
  }

  @Test
  void anInterruptWhileWaitingReturnsWithTheInterruptStatusSet() {
    ProcessRegistry r = registry();
    r.start(spec("x"));
    sessions.get(0).ignoreTerminate();

    Thread.currentThread().interrupt();
    try {
      r.terminate("x");
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(sessions.get(0).calls()).containsExactly("terminate", "waitFor:PT10S");
    assertThat(r.list().get(0).running()).isTrue();
  }

  // ---- the handle ----

  @Test
  void theHandleForwardsEveryOperation() throws Exception {
    ProcessRegistry r = registry();
    ProcessSession h = r.start(new ProcessSpec("x", ARGV, true, 0, 0, null));
    FakeSession inner = sessions.get(0);
    inner.tty("0123456789");

    assertThat(h.pid()).isEqualTo(100);
    assertThat(h.read(5, 10))
        .isEqualTo(
            new ProcessOutput(
                10, List.of(OutputChunk.of(5, ProcessStream.TTY, ascii("56789"))), false));
    assertThat(h.read(6, 11, Duration.ofMillis(3)).nextSeq()).isEqualTo(10);
    assertThat(h.read(7, java.nio.ByteBuffer.allocate(4)))
        .isEqualTo(new OutputRead(10, 3, ProcessStream.TTY, false));
    h.read(8, java.nio.ByteBuffer.allocate(5), Duration.ofMillis(2));
    h.write("hi".getBytes(StandardCharsets.UTF_8));
    h.closeStdin();
    h.resize(40, 120);
    assertThat(h.exitValue()).isEmpty();
    assertThat(h.waitFor(Duration.ofMillis(1))).isEmpty();
    h.terminate();
    assertThat(h.waitFor().reason()).isEqualTo(ProcessExit.Reason.TERMINATED);
    assertThat(h.exitValue()).isPresent();

    assertThat(inner.calls())
        .containsExactly(
            "read:5:10",
            "read:6:11:PT0.003S",
            "read:7:4",
            "read:8:5:PT0.002S",
            "write:hi",
            "closeStdin",
            "resize:40x120",
            "waitFor:PT0.001S",
            "terminate",
            "waitFor");
  }

  @Test
  void theHandleForwardsTheSessionsFailuresAsTheyAre() {
    ProcessRegistry r = registry();
    ProcessSession h = r.start(spec("x"));
    sessions.get(0).close();
    assertThatThrownBy(() -> h.read(0, 1)).isInstanceOf(ProcessClosedException.class);
    assertThatThrownBy(h::terminate).isInstanceOf(ProcessClosedException.class);
  }

  @Test
  void theHandleRefusesSignalsAndWatchesASessionCannotDo() {
    ProcessRegistry r = registry(spec -> new FakeSession(spec, 1), FakeSession::asPlainSession);
    ProcessSession h = r.start(spec("x"));

    ProcessSignaler signaler = ProcessSignaler.of(h).orElseThrow();
    assertThatThrownBy(() -> signaler.signal(ProcessSignal.INTERRUPT))
        .hasMessage("sandbox: process does not support signals")
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.NOT_AVAILABLE);
    ProcessEventSource source = ProcessEventSource.of(h).orElseThrow();
    assertThatThrownBy(source::watch)
        .hasMessage("sandbox: process does not support event streams")
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.NOT_AVAILABLE);
    assertThat(sessions.get(0).calls()).isEmpty();
  }

  @Test
  void theHandleForwardsSignalsAndWatchesWhenTheSessionCanDoThem() throws Exception {
    ProcessRegistry r = registry(spec -> new FakeSession(spec, 9));
    ProcessSession h = r.start(spec("x"));
    FakeSession inner = sessions.get(0);
    inner.stdout("hi");

    ProcessSignaler.of(h).orElseThrow().signal(ProcessSignal.INTERRUPT);
    try (EventStream events = ProcessEventSource.of(h).orElseThrow().watch()) {
      assertThat(events.poll(Duration.ZERO))
          .isEqualTo(ProcessEvent.output(OutputChunk.of(0, ProcessStream.STDOUT, ascii("hi"))));
      inner.exit(0);
      assertThat(events.poll(Duration.ofSeconds(5)))
          .isEqualTo(ProcessEvent.exited(2, ProcessExit.exited(0)));
    }
    assertThat(inner.calls()).containsExactly("signal:interrupt", "watch");
  }

  @Test
  void closeClosesTheSessionThenReleasesTheIdOnce() {
    ProcessRegistry r = registry();
    ProcessSession h = r.start(spec("x"));
    FakeSession inner = sessions.get(0);

    h.close();
    assertThat(inner.isClosed()).isTrue();
    assertThat(r.list()).isEmpty();
    assertThatThrownBy(() -> r.terminate("x"))
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.NOT_FOUND);

    h.close();
    assertThat(inner.calls()).containsExactly("close");
    // The ended session still answers what it may answer after close.
    assertThat(h.exitValue()).isPresent();
    assertThat(h.id()).isEqualTo("x");
  }

  @Test
  void closingAHandleAgainNeverReleasesANewSessionWithTheSameId() {
    ProcessRegistry r = registry();
    ProcessSession first = r.start(spec("x"));
    first.close();
    ProcessSession second = r.start(spec("x"));

    first.close();
    assertThat(r.list()).singleElement().extracting(ProcessInfo::pid).isEqualTo(second.pid());
    assertThatThrownBy(() -> r.start(spec("x")))
        .extracting(ProcessRegistryTest::kindOf)
        .isEqualTo(Kind.CONFLICT);
    assertThat(sessions.get(1).isClosed()).isFalse();
  }

  @Test
  void aFailingCloseStillReleasesTheId() {
    ProcessRegistry r = registry();
    ProcessSession h = r.start(spec("x"));
    SandboxException failure = new SandboxException(Kind.INTERNAL, "close failed");
    sessions.get(0).failClose(failure);

    assertThatThrownBy(h::close).isSameAs(failure);
    assertThat(r.list()).isEmpty();
    h.close(); // the second close does nothing, not even fail again
    assertThat(r.start(spec("x")).id()).isEqualTo("x");
  }

  // ---- concurrency ----

  @Test
  void concurrentStartsWithOneIdHaveExactlyOneWinner() throws Exception {
    int threads = 32;
    for (int round = 0; round < 20; round++) {
      specs.clear();
      ProcessRegistry r = registry();
      CountDownLatch go = new CountDownLatch(1);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<Future<ProcessSession>> results = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
          results.add(
              pool.submit(
                  () -> {
                    go.await();
                    return r.start(spec("same"));
                  }));
        }
        go.countDown();
        int won = 0;
        int conflicts = 0;
        for (Future<ProcessSession> f : results) {
          try {
            assertThat(f.get(10, TimeUnit.SECONDS).id()).isEqualTo("same");
            won++;
          } catch (java.util.concurrent.ExecutionException e) {
            assertThat(kindOf(e.getCause())).isEqualTo(Kind.CONFLICT);
            conflicts++;
          }
        }
        assertThat(won).isEqualTo(1);
        assertThat(conflicts).isEqualTo(threads - 1);
        assertThat(specs).hasSize(1);
        assertThat(r.list()).hasSize(1);
      } finally {
        pool.shutdownNow();
      }
    }
  }

  @Test
  void concurrentStartsAndClosesLeaveNothingBehind() throws Exception {
    ProcessRegistry r = registry();
    int threads = 8;
    int perThread = 500;
    Set<String> seen = ConcurrentHashMap.newKeySet();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        done.add(
            pool.submit(
                () -> {
                  go.await();
                  for (int i = 0; i < perThread; i++) {
                    // Half generated ids, half a small shared set of ids that keep being reused.
                    ProcessSpec s = i % 2 == 0 ? ProcessSpec.pipes(ARGV) : spec("shared-" + i % 4);
                    ProcessSession h;
                    try {
                      h = r.start(s);
                    } catch (SandboxException e) {
                      assertThat(e.kind()).isEqualTo(Kind.CONFLICT);
                      continue;
                    }
                    if (i % 2 == 0) {
                      assertThat(seen.add(h.id())).as("thread %d id %s", thread, h.id()).isTrue();
                    }
                    r.list();
                    h.close();
                  }
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(20, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(r.list()).isEmpty();
    assertThat(seen).hasSize(threads * perThread / 2);
  }

  // ---- ids ----

  @Test
  void newIdsAreTwentyBase32HexCharactersOfTheXidLayout() {
    long before = Instant.now().getEpochSecond();
    String id = ProcessRegistry.newId();
    long after = Instant.now().getEpochSecond();

    assertThat(id).matches("[0-9a-v]{19}[0g]"); // 96 bits: the last character carries one bit
    byte[] raw = decodeBase32Hex(id);
    long seconds =
        ((raw[0] & 0xFFL) << 24) | ((raw[1] & 0xFF) << 16) | ((raw[2] & 0xFF) << 8) | raw[3] & 0xFF;
    assertThat(seconds).isBetween(before, after + 1);

    byte[] next = decodeBase32Hex(ProcessRegistry.newId());
    // The five bytes in the middle are drawn once per JVM.
    for (int i = 4; i < 9; i++) {
      assertThat(next[i]).isEqualTo(raw[i]);
    }
  }

  @Test
  void tenThousandIdsAreUniqueAndSortInTheOrderTheyWereMade() {
    List<String> made = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      made.add(ProcessRegistry.newId());
    }
    assertThat(new HashSet<>(made)).hasSize(made.size());
    assertThat(made).isSorted();
  }

  @Test
  void idsMadeLaterSortAfterEarlierOnes() throws Exception {
    String earlier = ProcessRegistry.newId();
    Thread.sleep(1100); // into the next second, so the time field and not the counter decides
    String later = ProcessRegistry.newId();
    assertThat(later).isGreaterThan(earlier);
    assertThat(later.substring(0, 7)).isNotEqualTo(earlier.substring(0, 7));
  }

  @Test
  void idsMadeOnManyThreadsAreUnique() throws Exception {
    int threads = 8;
    Set<String> all = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  List<String> mine = new ArrayList<>();
                  for (int i = 0; i < 10_000; i++) {
                    mine.add(ProcessRegistry.newId());
                  }
                  assertThat(mine).isSorted();
                  all.addAll(mine);
                }));
      }
      for (Future<?> f : done) {
        f.get(20, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(all).hasSize(threads * 10_000);
  }

  private static byte[] decodeBase32Hex(String s) {
    String alphabet = "0123456789abcdefghijklmnopqrstuv";
    byte[] out = new byte[12];
    int buffer = 0;
    int bits = 0;
    int at = 0;
    for (char c : s.toCharArray()) {
      buffer = (buffer << 5) | alphabet.indexOf(c);
      bits += 5;
      if (bits >= 8 && at < out.length) {
        out[at++] = (byte) (buffer >>> (bits - 8));
        bits -= 8;
      }
    }
    return out;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
