package dev.confine.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.Enforcement;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.Runner;
import dev.confine.Runners;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessInfo;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class FakeProcessManagerTest {
  private static final List<String> ARGV = List.of("make", "test");
  private static final ProcessExit TERMINATED =
      new ProcessExit(-1, 15, ProcessExit.Reason.TERMINATED, null);

  private final FakeProcessManager manager = new FakeProcessManager();

  private static ProcessSpec spec(String id) {
    return new ProcessSpec(id, ARGV, false, 0, 0, null);
  }

  private static Kind kindOf(Throwable t) {
    return ((SandboxException) t).kind();
  }

  private static List<String> ids(List<ProcessInfo> infos) {
    return infos.stream().map(ProcessInfo::id).toList();
  }

  // ---- start ----

  @Test
  void aStartRecordsTheSpecAndReturnsARunningSessionForIt() {
    ProcessSpec spec = new ProcessSpec("build", ARGV, true, 30, 90, null);
    FakeSession s = manager.start(spec);

    assertThat(s.id()).isEqualTo("build");
    assertThat(s.pid()).isEqualTo(1001);
    assertThat(s.spec()).isEqualTo(spec);
    assertThat(s.rows()).isEqualTo(30);
    assertThat(s.exitValue()).isEmpty();
    assertThat(manager.specs()).containsExactly(spec);
    assertThat(manager.lastSpec()).isSameAs(spec);
    assertThat(manager.sessions()).containsExactly(s);
    assertThat(manager.lastSession()).isSameAs(s);
    assertThat(manager.session("build")).isSameAs(s);
    assertThat(manager.start(spec("two")).pid()).isEqualTo(1002);
  }

  @Test
  void aSpecWithoutAnIdGetsOneAndIsRecordedAsItWasPassed() {
    ProcessSpec anonymous = ProcessSpec.pipes(ARGV);
    manager.start(spec("fake-2"));
    FakeSession first = manager.start(anonymous);
    FakeSession second = manager.start(anonymous);

    assertThat(first.id()).isEqualTo("fake-1");
    assertThat(second.id()).as("fake-2 is taken").isEqualTo("fake-3");
    assertThat(first.spec()).isEqualTo(anonymous.withId("fake-1"));
    assertThat(manager.specs()).containsExactly(spec("fake-2"), anonymous, anonymous);
  }

  @Test
  void queuedScriptsRunInOrderBeforeStartReturnsThenTheEveryStartScript() throws Exception {
    manager
        .enqueue(s -> s.stdout("one\n").exit(0))
        .enqueue(s -> s.stderr("two\n").exit(2))
        .onEveryStart(s -> s.stdout(String.join(" ", s.spec().argv())));
    assertThat(manager.pending()).isEqualTo(2);

    FakeSession one = manager.start(spec("a"));
    assertThat(one.exitValue()).contains(ProcessExit.exited(0));
    assertThat(SessionReads.readAll(one)).isEqualTo("one\n");
    FakeSession two = manager.start(spec("b"));
    assertThat(two.exitValue()).contains(ProcessExit.exited(2));
    assertThat(manager.pending()).isZero();

    FakeSession three = manager.start(spec("c"));
    ProcessOutput out = three.read(0, 100);
    assertThat(new String(out.bytes(), StandardCharsets.UTF_8)).isEqualTo("make test");
    assertThat(three.exitValue()).as("still running").isEmpty();
  }

  @Test
  void aQueuedFailureIsThrownByOneStartWhichTakesNoId() {
    SandboxException refused = new SandboxException(Kind.POLICY_DENIED, "no");
    IllegalStateException bug = new IllegalStateException("bug");
    manager.enqueueFailure(refused).enqueueFailure(bug).enqueue(s -> s.exit(0));

    assertThatThrownBy(() -> manager.start(spec("x"))).isSameAs(refused);
    assertThatThrownBy(() -> manager.start(spec("x"))).isSameAs(bug);
    assertThat(manager.list()).isEmpty();
    assertThat(manager.sessions()).isEmpty();
    assertThatIllegalStateException().isThrownBy(manager::lastSession);

    FakeSession s = manager.start(spec("x"));
    assertThat(s.exitValue()).contains(ProcessExit.exited(0));
    assertThat(manager.specs()).hasSize(3);
  }

  @Test
  void aTakenIdConflictsUntilItsSessionIsClosedEvenAfterItEnded() {
    FakeSession s = manager.start(spec("x"));
    manager.enqueueFailure(new IllegalStateException("for the next real start"));

    assertThatThrownBy(() -> manager.start(spec("x")))
        .hasMessage("sandbox: process id \"x\" already exists")
        .extracting(FakeProcessManagerTest::kindOf)
        .isEqualTo(Kind.CONFLICT);
    s.exit(0);
    assertThatThrownBy(() -> manager.start(spec("x")))
        .extracting(FakeProcessManagerTest::kindOf)
        .isEqualTo(Kind.CONFLICT);
    assertThat(manager.pending()).as("a conflict leaves the queue alone").isEqualTo(1);
    assertThat(manager.specs()).hasSize(3);

    s.close();
    assertThatThrownBy(() -> manager.start(spec("x"))).isInstanceOf(IllegalStateException.class);
    FakeSession again = manager.start(spec("x"));
    assertThat(again).isNotSameAs(s);
    assertThat(manager.session("x")).isSameAs(again);
    assertThat(ids(manager.list())).containsExactly("x");

    s.close(); // closing the old session again frees nothing
    assertThat(ids(manager.list())).containsExactly("x");
  }

  @Test
  void aScriptThatThrowsFailsTheStartAndClosesItsSession() {
    IllegalStateException broken = new IllegalStateException("broken script");
    manager.enqueue(
        s -> {
          throw broken;
        });

    assertThatThrownBy(() -> manager.start(spec("x"))).isSameAs(broken);
    assertThat(manager.lastSession().isClosed()).isTrue();
    assertThat(manager.list()).isEmpty();
    assertThat(manager.start(spec("x")).isClosed()).isFalse();
  }

  @Test
  void lookupsOfWhatNeverHappenedAreIllegalState() {
    assertThatIllegalStateException().isThrownBy(manager::lastSpec);
    assertThatIllegalStateException().isThrownBy(manager::lastSession);
    assertThatIllegalStateException()
        .isThrownBy(() -> manager.session("x"))
        .withMessageContaining("\"x\"");
  }

  // ---- list ----

  @Test
  void listReportsTheOpenSessionsOldestFirstAsASnapshot() throws Exception {
    FakeSession a = manager.start(spec("a"));
    Thread.sleep(2); // distinct start times
    FakeSession b = manager.start(new ProcessSpec("b", List.of("bash"), true, 0, 0, null));

    List<ProcessInfo> running = manager.list();
    assertThat(ids(running)).containsExactly("a", "b");
    ProcessInfo info = running.get(1);
    assertThat(info.argv()).containsExactly("bash");
    assertThat(info.tty()).isTrue();
    assertThat(info.pid()).isEqualTo(b.pid());
    assertThat(info.running()).isTrue();
    assertThat(info.exit()).isNull();
    assertThat(running.get(0).startedAt()).isBefore(info.startedAt());

    b.exit(3);
    ProcessInfo ended = manager.list().get(1);
    assertThat(ended.running()).isFalse();
    assertThat(ended.exit()).isEqualTo(ProcessExit.exited(3));
    assertThat(ended.startedAt()).isEqualTo(info.startedAt());

    a.close();
    assertThat(ids(manager.list())).containsExactly("b");
    assertThat(ids(running)).containsExactly("a", "b");
    assertThatThrownBy(() -> running.remove(0)).isInstanceOf(UnsupportedOperationException.class);
    assertThat(manager.sessions()).containsExactly(a, b);
  }

  // ---- terminate ----

  @Test
  void terminateEndsTheSessionAndWaitsForIt() {
    FakeSession s = manager.start(spec("x"));
    manager.terminate("x");

    assertThat(s.exitValue()).contains(TERMINATED);
    assertThat(s.calls()).containsExactly("terminate", "waitFor:PT10S");
    assertThat(manager.list().get(0).exit()).isEqualTo(TERMINATED);
    assertThat(manager.terminated()).containsExactly("x");
  }

  @Test
  void terminatingAnEndedSessionLeavesIt() {
    FakeSession s = manager.start(spec("x"));
    s.exit(0);
    manager.terminate("x");
    assertThat(s.calls()).isEmpty();
    assertThat(s.exitValue()).contains(ProcessExit.exited(0));
  }

  @Test
  void terminatingAnUnknownOrClosedIdIsNotFoundAndIsRecorded() {
    manager.start(spec("gone")).close();
    for (String id : new String[] {"nope", "gone", null}) {
      assertThatThrownBy(() -> manager.terminate(id))
          .extracting(FakeProcessManagerTest::kindOf)
          .isEqualTo(Kind.NOT_FOUND);
    }
    assertThatThrownBy(() -> manager.terminate("nope"))
        .hasMessage("sandbox: unknown process id \"nope\"");
    assertThat(manager.terminated()).containsExactly("nope", "gone", null, "nope");
  }

  @Test
  void theSessionsTerminateFailureIsRethrownAsItIs() {
    SandboxException failure = new SandboxException(Kind.INTERNAL, "kill failed");
    manager.enqueue(s -> s.failTerminate(failure));
    FakeSession s = manager.start(spec("x"));

    assertThatThrownBy(() -> manager.terminate("x")).isSameAs(failure);
    assertThat(s.calls()).containsExactly("terminate");
    assertThat(s.exitValue()).isEmpty();
  }

  @Test
  void anInterruptWhileWaitingReturnsWithTheInterruptStatusSet() {
    manager.enqueue(FakeSession::ignoreTerminate);
    FakeSession s = manager.start(spec("x"));

    Thread.currentThread().interrupt();
    try {
      manager.terminate("x");
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(s.calls()).containsExactly("terminate", "waitFor:PT10S");
    assertThat(s.exitValue()).isEmpty();
  }

  @Test
  void terminateWaitsForASessionThatEndsLate() throws Exception {
    manager.enqueue(FakeSession::ignoreTerminate);
    FakeSession s = manager.start(spec("x"));
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<?> terminating = pool.submit(() -> manager.terminate("x"));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!s.calls().contains("waitFor:PT10S")) {
        assertThat(System.nanoTime() - deadline).isNegative();
        Thread.sleep(1);
      }
      assertThat(terminating).isNotDone();
      s.exit(TERMINATED);
      terminating.get(10, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
  }

  // ---- as a runner's backend ----

  @Test
  void theRunnerExecsThroughTheFakeRunnerAndIsItsOwnManager() {
    FakeRunner execs =
        new FakeRunner()
            .enqueue(ExecResult.of(0, "out", ""))
            .reporting(Enforcement.builder().netModes(NetMode.DENY_ALL).build());
    Runner runner = manager.runner(execs);

    assertThat(runner.exec("ls", List.of("-l"), null).stdoutText()).isEqualTo("out");
    assertThat(execs.lastRequest().command()).isEqualTo("ls");
    assertThat(Enforcement.of(runner).enforces(NetMode.DENY_ALL)).isTrue();

    ProcessManager m = ProcessManager.of(runner).orElseThrow();
    assertThat(m).isSameAs(runner);
    ProcessSession s = m.start(spec("x"));
    assertThat(s).isSameAs(manager.session("x"));
    assertThat(m.list()).isEqualTo(manager.list());
    m.terminate("x");
    assertThat(manager.terminated()).containsExactly("x");
    assertThat(manager.specs()).containsExactly(spec("x"));
  }

  @Test
  void decoratorsOverTheRunnerReachTheManagerWithTheirPolicyApplied() {
    FakeRunner execs = new FakeRunner();
    Runner runner = Runners.allowCommands(manager.runner(execs), List.of("make"));
    ProcessManager m = ProcessManager.of(runner).orElseThrow();

    ProcessSession s = m.start(spec("ok"));
    assertThat(s.id()).isEqualTo("ok");
    assertThatThrownBy(() -> m.start(ProcessSpec.pipes(List.of("rm", "-rf", "/"))))
        .extracting(FakeProcessManagerTest::kindOf)
        .isEqualTo(Kind.POLICY_DENIED);
    assertThat(manager.specs()).containsExactly(spec("ok"));
    assertThat(execs.callCount()).isZero();
  }

  // ---- docs/testing.md ----

  /** The code under test of the example: runs the build as a session, returns what it printed. */
  private static String build(Runner runner) throws InterruptedException {
    ProcessManager sessions = ProcessManager.of(runner).orElseThrow();
    try (ProcessSession s = sessions.start(ProcessSpec.pipes(List.of("make", "test")))) {
      StringBuilder out = new StringBuilder();
      for (long cursor = 0; ; ) {
        ProcessOutput o = s.read(cursor, 64 * 1024);
        out.append(new String(o.bytes(), StandardCharsets.UTF_8));
        cursor = o.nextSeq();
        if (o.eof()) {
          return out.toString();
        }
      }
    }
  }

  @Test
  void theExampleOfTheDocsRuns() throws Exception {
    FakeProcessManager sessions = new FakeProcessManager();
    sessions.enqueue(s -> s.stdout("ok\n").stderr("1 warning\n").exit(0));
    Runner runner = Runners.allowCommands(sessions.runner(new FakeRunner()), List.of("make"));

    assertThat(build(runner)).isEqualTo("ok\n1 warning\n");
    assertThat(sessions.lastSpec().argv()).containsExactly("make", "test");
    assertThat(sessions.lastSession().isClosed()).isTrue();

    FakeSession s = new FakeSession(ProcessSpec.terminal(List.of("sh")), 1);
    s.onWrite(s::tty).onCloseStdin(() -> s.exit(0));
    s.write("hi\n".getBytes(StandardCharsets.UTF_8));
    s.closeStdin();
    assertThat(SessionReads.readAll(s)).isEqualTo("hi\n");
  }

  // ---- threads ----

  @Test
  void concurrentStartsGetDistinctIdsAndPids() throws Exception {
    int threads = 8;
    int each = 100;
    Set<String> ids = ConcurrentHashMap.newKeySet();
    Set<Integer> pids = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < each; i++) {
                    FakeSession s = manager.start(ProcessSpec.pipes(ARGV));
                    ids.add(s.id());
                    pids.add(s.pid());
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get(20, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(ids).hasSize(threads * each);
    assertThat(pids).hasSize(threads * each);
    assertThat(manager.list()).hasSize(threads * each);
    assertThat(manager.specs()).hasSize(threads * each);
  }

  @Test
  void concurrentStartsWithOneIdHaveExactlyOneWinner() throws Exception {
    int threads = 16;
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<FakeSession>> results = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        results.add(
            pool.submit(
                () -> {
                  go.await();
                  return manager.start(spec("same"));
                }));
      }
      go.countDown();
      int won = 0;
      for (Future<FakeSession> f : results) {
        try {
          assertThat(f.get(10, TimeUnit.SECONDS).id()).isEqualTo("same");
          won++;
        } catch (ExecutionException e) {
          assertThat(kindOf(e.getCause())).isEqualTo(Kind.CONFLICT);
        }
      }
      assertThat(won).isEqualTo(1);
      assertThat(manager.sessions()).hasSize(1);
      assertThat(manager.specs()).hasSize(threads);
    } finally {
      pool.shutdownNow();
    }
  }
}
