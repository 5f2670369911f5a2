package dev.confine.linux.child;

import static dev.confine.linux.child.ChildTests.PATIENCE;
import static dev.confine.linux.child.ChildTests.sh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.Engine;
import dev.confine.linux.child.ChildTests.Proc;
import dev.confine.linux.libc.LibC;
import dev.confine.linux.loop.EventLoop;
import dev.confine.linux.spawn.ExitStatus;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.sys.Syscalls;
import dev.confine.linux.tree.Cap;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.linux.tree.TreeUsage;
import dev.confine.testing.HostRequirements;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Execution} at the engine level, through {@link Engine#run} or {@link Execution#start}
 * directly: how a child ended, what it wrote, what it read, and that nothing of it (no process, no
 * fd, no loop registration) outlives the call. Each scenario runs on a platform thread (the caller
 * polls) and on a virtual thread (the loop watches).
 */
@Timeout(180)
class ExecutionTest {
  /** Who waits for the child. */
  enum Caller {
    PLATFORM,
    VIRTUAL;

    boolean virtual() {
      return this == VIRTUAL;
    }
  }

  /** What {@link Engine#run} handed over, copied out of the exec. */
  record Result(
      ChildOutcome outcome,
      byte[] stdout,
      byte[] stderr,
      boolean stdoutTruncated,
      boolean stderrTruncated,
      String captureFailure,
      Throwable stdinFailure,
      long stdinWritten,
      long childNanos) {
    String out() {
      return new String(stdout, StandardCharsets.UTF_8);
    }
  }

  @TempDir Path dir;

  private final List<Proc> strays = new ArrayList<>();
  private TreeMap<Integer, String> fdsBefore;
  private int registrationsBefore;

  @BeforeEach
  void engine() {
    HostRequirements.require(NativeAccess.availability());
    registrationsBefore = EventLoop.shared().registrationCount(); // the loop's own fds are open
    fdsBefore = ChildTests.fds();
  }

  /** Every test: no fd of the engine's and no loop registration is left once it is over. */
  @AfterEach
  void nothingLeft() throws InterruptedException {
    strays.forEach(Proc::kill); // only when a test failed before its processes were dealt with
    if (fdsBefore != null) {
      ChildTests.awaitNothingLeft(fdsBefore, registrationsBefore);
    }
  }

  private static ChildSpec spec(SpawnSpec spawn, byte[] stdin, InputStream stream, long cap) {
    return new ChildSpec(
        spawn, stdin, stream, cap, TreeGuard.NONE, System.nanoTime() + PATIENCE.toNanos());
  }

  private static Result run(ChildSpec spec) {
    return Engine.run(
        spec,
        (outcome, c) ->
            new Result(
                outcome,
                c.takeStdout(),
                c.takeStderr(),
                c.stdoutTruncated(),
                c.stderrTruncated(),
                c.captureFailure(),
                c.stdinFailure(),
                c.stdinWritten(),
                c.childNanos()));
  }

  private static Result run(Caller caller, ChildSpec spec) throws Exception {
    return ChildTests.onThread(
        caller.virtual(),
        () -> {
          assertThat(Thread.currentThread().isVirtual()).isEqualTo(caller.virtual());
          return run(spec);
        });
  }

  private static Result run(Caller caller, String script) throws Exception {
    return run(caller, spec(sh(script, false), null, null, 1 << 20));
  }

  private byte[] randomFile(String name, int size, long seed) throws IOException {
    byte[] data = new byte[size];
    new Random(seed).nextBytes(data);
    for (int i = 0; i < 256 && i < size; i++) {
      data[i] = (byte) i; // every byte value, NUL and 0xff included
    }
    Files.write(dir.resolve(name), data);
    return data;
  }

  private static void assertSameBytes(byte[] actual, byte[] expected) {
    assertThat(actual.length).as("length").isEqualTo(expected.length);
    assertThat(Arrays.mismatch(actual, expected)).as("first differing byte").isEqualTo(-1);
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void exitCodesAndSignalsAreInTheOutcome(Caller caller) throws Exception {
    for (int code : new int[] {0, 1, 42, 255}) {
      ChildOutcome o = run(caller, "exit " + code).outcome();
      assertThat(o.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
      assertThat(o.exit()).isEqualTo(new ExitStatus(code, 0));
      assertThat(o.exit().signaled()).isFalse();
      assertThat(o.reapFailure()).isNull();
      assertThat(o.leftoversKilled()).isFalse();
      assertThat(o.exceeded()).isNull();
      assertThat(o.unenforceable()).isNull();
      assertThat(o.usage()).isEqualTo(TreeUsage.NOT_MEASURED);
    }
    for (int signal : new int[] {LibC.SIGTERM(), LibC.SIGKILL(), LibC.SIGHUP()}) {
      ChildOutcome o = run(caller, "kill -" + signal + " $$").outcome();
      assertThat(o.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
      assertThat(o.exit()).as("signal %d", signal).isEqualTo(new ExitStatus(-1, signal));
      assertThat(o.exit().signaled()).isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void stdoutAndStderrAreCapturedExactlyAndApart(Caller caller) throws Exception {
    byte[] out = randomFile("out.bin", 1 << 20, 1); // 16 pipes' worth each, written at once
    byte[] err = randomFile("err.bin", 300_000, 2);
    Result r =
        run(
            caller,
            "cat " + dir.resolve("out.bin") + " & cat " + dir.resolve("err.bin") + " >&2; wait");

    assertThat(r.outcome().exit()).isEqualTo(new ExitStatus(0, 0));
    assertSameBytes(r.stdout(), out);
    assertSameBytes(r.stderr(), err);
    assertThat(r.stdoutTruncated()).isFalse();
    assertThat(r.stderrTruncated()).isFalse();
    assertThat(r.captureFailure()).isNull();
    assertThat(r.childNanos()).isPositive();
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void outputPastTheCapIsDroppedFlaggedAndDrainedSoTheChildRunsOn(Caller caller) throws Exception {
    byte[] big = randomFile("big.bin", 1 << 20, 3);
    byte[] exact = randomFile("exact.bin", 1000, 4);
    // The child ends only when every byte was read: a cap that stopped reading would block it on
    // a full pipe until the deadline.
    Result r =
        run(
            caller,
            spec(
                sh(
                    "cat " + dir.resolve("big.bin") + "; cat " + dir.resolve("exact.bin") + " >&2",
                    false),
                null,
                null,
                1000));
    assertThat(r.outcome().ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(r.outcome().exit()).isEqualTo(new ExitStatus(0, 0));
    assertSameBytes(r.stdout(), Arrays.copyOf(big, 1000));
    assertThat(r.stdoutTruncated()).isTrue();
    assertSameBytes(r.stderr(), exact); // exactly the cap is not past it
    assertThat(r.stderrTruncated()).isFalse();

    Result none =
        run(
            caller,
            spec(sh("cat " + dir.resolve("big.bin") + "; echo x >&2", false), null, null, 0));
    assertThat(none.outcome().exit()).isEqualTo(new ExitStatus(0, 0));
    assertThat(none.stdout()).isEmpty();
    assertThat(none.stderr()).isEmpty();
    assertThat(none.stdoutTruncated()).isTrue();
    assertThat(none.stderrTruncated()).isTrue();

    Result silent = run(caller, spec(sh("true", false), null, null, 0));
    assertThat(silent.stdoutTruncated()).isFalse();
    assertThat(silent.stderrTruncated()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void stdinBytesAreDeliveredAndThenEndOfFile(Caller caller) throws Exception {
    byte[] in = new byte[300_000]; // more than a pipe holds: written as the child reads
    new Random(5).nextBytes(in);
    // cat ends only at end of file: without it the exec would run into its deadline.
    Result r = run(caller, spec(sh("cat", true), in, null, 1 << 20));
    assertThat(r.outcome().ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(r.outcome().exit()).isEqualTo(new ExitStatus(0, 0));
    assertSameBytes(r.stdout(), in);
    assertThat(r.stdinWritten()).isZero(); // bytes, not a stream
    assertThat(r.stdinFailure()).isNull();

    Result empty = run(caller, spec(sh("cat; echo eof", true), null, null, 1 << 20));
    assertThat(empty.out()).isEqualTo("eof\n");

    // A child that never reads its stdin: the rest of the bytes go nowhere, nothing fails.
    Result ignored = run(caller, spec(sh("exit 3", true), new byte[1 << 20], null, 1 << 20));
    assertThat(ignored.outcome().ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(ignored.outcome().exit()).isEqualTo(new ExitStatus(3, 0));
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void aStdinStreamIsPumpedToItsEnd(Caller caller) throws Exception {
    byte[] in = new byte[300_000];
    new Random(6).nextBytes(in);
    Result r = run(caller, spec(sh("cat", true), null, new ByteArrayInputStream(in), 1 << 20));
    assertThat(r.outcome().exit()).isEqualTo(new ExitStatus(0, 0));
    assertSameBytes(r.stdout(), in);
    assertThat(r.stdinWritten()).isEqualTo(in.length);
    assertThat(r.stdinFailure()).isNull();
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void aStdinStreamThatThrowsEndsTheInputThereAndIsReported(Caller caller) throws Exception {
    IOException boom = new IOException("boom");
    InputStream failing =
        new InputStream() {
          private boolean gave;

          @Override
          public int read() {
            throw new UnsupportedOperationException();
          }

          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            if (gave) {
              throw boom;
            }
            gave = true;
            Arrays.fill(b, off, off + 1000, (byte) 'a');
            return 1000;
          }
        };
    Result r = run(caller, spec(sh("cat", true), null, failing, 1 << 20));
    assertThat(r.outcome().ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(r.outcome().exit()).isEqualTo(new ExitStatus(0, 0)); // it read end of file there
    assertThat(r.out()).isEqualTo("a".repeat(1000));
    assertThat(r.stdinFailure()).isSameAs(boom);
    assertThat(r.stdinWritten()).isEqualTo(1000);
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void aStdinStreamThatNeverEndsHoldsUpNothingAndIsStoppedWithTheExec(Caller caller)
      throws Exception {
    Path reading = dir.resolve("reading");
    CountDownLatch stopped = new CountDownLatch(1);
    InputStream blocking =
        new InputStream() {
          @Override
          public int read() {
            throw new UnsupportedOperationException();
          }

          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            Files.createFile(reading); // the child waits for this, so the exec ends in this read
            try {
              new CountDownLatch(1).await(); // until the pump is stopped
            } catch (InterruptedException e) {
              stopped.countDown();
              throw new IOException("interrupted", e);
            }
            return -1;
          }
        };
    String script = "while [ ! -e " + reading + " ]; do sleep 0.01; done; echo hi";
    Result r = run(caller, spec(sh(script, true), null, blocking, 1 << 20));
    assertThat(r.outcome().ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(r.out()).isEqualTo("hi\n");
    assertThat(stopped.await(PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .as("the pump's read is interrupted when the exec ends")
        .isTrue();
    assertThat(r.stdinFailure()).as("a stop is not a failure of the stream").isNull();
    assertThat(r.stdinWritten()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void theDeadlineKillsTheWholeProcessGroup(Caller caller) throws Exception {
    Path pidFile = dir.resolve("bg.pid");
    String script = "sleep 300 & " + ChildTests.writePid("$!", pidFile) + "; exec sleep 300";
    long[] took = new long[1];
    ChildOutcome o =
        ChildTests.onThread(
            caller.virtual(),
            () -> {
              Execution e = Execution.start(spec(sh(script, false), null, null, 1 << 20));
              Proc background = ChildTests.awaitPidFile(pidFile);
              synchronized (strays) {
                strays.add(background);
              }
              // The deadline is set once the group has its second member, so it passes with both
              // running whatever the machine's load.
              long start = System.nanoTime();
              ChildOutcome outcome =
                  e.runToCompletion(
                      start + TimeUnit.MILLISECONDS.toNanos(100), Engine.DRAIN.toNanos());
              took[0] = System.nanoTime() - start;
              return outcome;
            });
    assertThat(o.ending()).isEqualTo(ChildOutcome.Ending.TIMED_OUT);
    assertThat(o.exit()).isEqualTo(new ExitStatus(-1, LibC.SIGKILL()));
    assertThat(o.leftoversKilled()).isFalse(); // killed with the group, not left over
    assertThat(took[0]).isLessThan(TimeUnit.SECONDS.toNanos(30)); // not the 300 s of the sleeps
    strays.getFirst().awaitDead();

    // The same through the front door, the deadline in the spec.
    Result r =
        run(
            caller,
            new ChildSpec(
                sh("exec sleep 300", false),
                null,
                null,
                1 << 20,
                TreeGuard.NONE,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200)));
    assertThat(r.outcome().ending()).isEqualTo(ChildOutcome.Ending.TIMED_OUT);
    assertThat(r.outcome().exit()).isEqualTo(new ExitStatus(-1, LibC.SIGKILL()));
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void anInterruptKillsTheGroupAndIsReportedWithTheStatusRestored(Caller caller) throws Exception {
    Path pidFile = dir.resolve("bg.pid");
    String script = "sleep 300 & " + ChildTests.writePid("$!", pidFile) + "; exec sleep 300";
    CountDownLatch ready = new CountDownLatch(1);
    boolean[] interruptedAfter = new boolean[1];
    FutureTask<ChildOutcome> task =
        new FutureTask<>(
            () -> {
              Execution e = Execution.start(spec(sh(script, false), null, null, 1 << 20));
              Proc background = ChildTests.awaitPidFile(pidFile);
              synchronized (strays) {
                strays.add(background);
              }
              ready.countDown();
              ChildOutcome outcome = e.runToCompletion(Long.MAX_VALUE, Engine.DRAIN.toNanos());
              interruptedAfter[0] = Thread.currentThread().isInterrupted();
              return outcome;
            });
    Thread waiter =
        caller.virtual() ? Thread.ofVirtual().start(task) : Thread.ofPlatform().start(task);
    assertThat(ready.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    waiter.interrupt();
    ChildOutcome o = task.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    waiter.join();

    assertThat(o.ending()).isEqualTo(ChildOutcome.Ending.INTERRUPTED);
    assertThat(interruptedAfter[0]).as("interrupt status restored").isTrue();
    assertThat(o.exit()).isEqualTo(new ExitStatus(-1, LibC.SIGKILL()));
    strays.getFirst().awaitDead();
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void aBackgroundProcessHoldingThePipesIsKilledAfterTheDrain(Caller caller) throws Exception {
    long drain = TimeUnit.MILLISECONDS.toNanos(200);
    long[] took = new long[1];
    Execution[] exec = new Execution[1];
    ChildOutcome o =
        ChildTests.onThread(
            caller.virtual(),
            () -> {
              exec[0] =
                  Execution.start(spec(sh("sleep 300 & echo $!", false), null, null, 1 << 20));
              long start = System.nanoTime();
              ChildOutcome outcome =
                  exec[0].runToCompletion(System.nanoTime() + PATIENCE.toNanos(), drain);
              took[0] = System.nanoTime() - start;
              return outcome;
            });
    Proc background = procFrom(exec[0].takeStdout());
    assertThat(o.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(o.exit()).isEqualTo(new ExitStatus(0, 0));
    assertThat(o.leftoversKilled()).isTrue();
    // The drain, the settle after the kill, and a generous bound: not the 300 s of the sleep.
    assertThat(took[0])
        .isLessThan(drain + ChildLifecycle.SETTLE_AFTER_KILL_NANOS + TimeUnit.SECONDS.toNanos(20));
    background.awaitDead();

    // Through the front door: Engine.DRAIN, then the same.
    long start = System.nanoTime();
    Result r = run(caller, "sleep 300 & echo $!");
    long frontDoor = System.nanoTime() - start;
    Proc second = procFrom(r.stdout());
    assertThat(r.outcome().leftoversKilled()).isTrue();
    assertThat(frontDoor)
        .isLessThan(
            Engine.DRAIN.toNanos()
                + ChildLifecycle.SETTLE_AFTER_KILL_NANOS
                + TimeUnit.SECONDS.toNanos(20));
    second.awaitDead();
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void aBackgroundProcessThatLetGoOfThePipesIsKilledAsALeftover(Caller caller) throws Exception {
    Result r = run(caller, "sleep 300 >/dev/null 2>&1 & echo $!");
    Proc background = procFrom(r.stdout());
    assertThat(r.outcome().ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(r.outcome().leftoversKilled()).isTrue();
    background.awaitDead();

    assertThat(run(caller, "echo alone").outcome().leftoversKilled()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void aProcessThatLeftTheGroupHoldingThePipesIsCutOff(Caller caller) throws Exception {
    // Nothing but the group is there to kill (no guard): the escapee is cut off, not waited for.
    long drain = TimeUnit.MILLISECONDS.toNanos(200);
    long[] took = new long[1];
    Execution[] exec = new Execution[1];
    ChildOutcome o =
        ChildTests.onThread(
            caller.virtual(),
            () -> {
              exec[0] =
                  Execution.start(
                      spec(sh("setsid sleep 300 & echo $!", false), null, null, 1 << 20));
              long start = System.nanoTime();
              ChildOutcome outcome =
                  exec[0].runToCompletion(System.nanoTime() + PATIENCE.toNanos(), drain);
              took[0] = System.nanoTime() - start;
              return outcome;
            });
    Proc escapee = procFrom(exec[0].takeStdout());
    try {
      assertThat(o.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
      assertThat(o.exit()).isEqualTo(new ExitStatus(0, 0));
      assertThat(took[0])
          .isLessThan(
              drain + ChildLifecycle.SETTLE_AFTER_KILL_NANOS + TimeUnit.SECONDS.toNanos(20));
    } finally {
      escapee.kill(); // ours, and the engine could not reach it
      escapee.awaitDead();
    }
  }

  private Proc procFrom(byte[] stdout) {
    Proc p = Proc.of(Integer.parseInt(new String(stdout, StandardCharsets.UTF_8).trim()));
    strays.add(p);
    return p;
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void aPlatformCallerPollsItselfAndAVirtualOnesChildIsWatchedByTheLoop(Caller caller)
      throws Exception {
    EventLoop loop = EventLoop.shared();
    int[] watched = new int[1];
    ChildOutcome o =
        ChildTests.onThread(
            caller.virtual(),
            () -> {
              int before = settledRegistrations(loop);
              Execution e = Execution.start(spec(sh("echo hi", false), null, null, 1 << 20));
              watched[0] = loop.registrationCount() - before;
              return e.runToCompletion(
                  System.nanoTime() + PATIENCE.toNanos(), Engine.DRAIN.toNanos());
            });
    assertThat(o.exit()).isEqualTo(new ExitStatus(0, 0));
    // The pidfd, stdout and stderr (stdin is /dev/null) on the loop, or none.
    assertThat(watched[0]).isEqualTo(caller.virtual() ? 3 : 0);
  }

  /**
   * The loop's registrations once they have held still for 100 ms (at most 5 s): the loop is
   * shared, and an earlier test's child may still be leaving it while this one counts.
   */
  private static int settledRegistrations(EventLoop loop) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    int n = loop.registrationCount();
    while (System.nanoTime() < end) {
      Thread.sleep(100);
      int m = loop.registrationCount();
      if (m == n) {
        return m;
      }
      n = m;
    }
    return n;
  }

  /** A guard that spawns as {@link TreeGuard#NONE} does and records what it was told. */
  private static final class RecordingGuard implements TreeGuard {
    final List<String> calls = new ArrayList<>();
    final RuntimeException usageFailure = new IllegalStateException("cgroup gone");
    final TreeUsage usage = new TreeUsage(1234, 5, 6, true);

    @Override
    public synchronized Spawner.Spawned spawn(SpawnSpec spec) {
      calls.add("spawn");
      return Spawner.spawn(spec);
    }

    @Override
    public synchronized void started(int pid) {
      calls.add("started " + pid);
    }

    @Override
    public synchronized void killTree() {
      calls.add("killTree");
    }

    @Override
    public synchronized void close() {
      calls.add("close");
    }

    @Override
    public Cap exceeded() {
      return Cap.MEMORY;
    }

    @Override
    public Throwable unenforceable() {
      return usageFailure;
    }

    @Override
    public TreeUsage usage() {
      return usage;
    }

    synchronized List<String> calls() {
      return List.copyOf(calls);
    }
  }

  @ParameterizedTest
  @EnumSource(Caller.class)
  void theGuardIsToldOfTheChildClosedAtTheEndAndReportedInTheOutcome(Caller caller)
      throws Exception {
    RecordingGuard guard = new RecordingGuard();
    int[] pid = new int[1];
    ChildOutcome o =
        ChildTests.onThread(
            caller.virtual(),
            () -> {
              Execution e =
                  Execution.start(
                      new ChildSpec(
                          sh("exit 7", false), null, null, 1 << 20, guard, Long.MAX_VALUE));
              pid[0] = e.pid();
              return e.runToCompletion(
                  System.nanoTime() + PATIENCE.toNanos(), Engine.DRAIN.toNanos());
            });
    assertThat(o.exit()).isEqualTo(new ExitStatus(7, 0));
    assertThat(guard.calls()).containsExactly("spawn", "started " + pid[0], "close");
    assertThat(o.exceeded()).isEqualTo(Cap.MEMORY);
    assertThat(o.unenforceable()).isSameAs(guard.usageFailure);
    assertThat(o.usage()).isEqualTo(guard.usage);
  }

  @Test
  void anOutOfRangeCapIsRefusedBeforeAnythingIsSpawnedAndTheGuardIsClosed() {
    for (long cap : new long[] {-1, Execution.maxOutputCap() + 1, Long.MAX_VALUE}) {
      RecordingGuard guard = new RecordingGuard();
      ChildSpec spec = new ChildSpec(sh("echo hi", false), null, null, cap, guard, Long.MAX_VALUE);
      assertThatThrownBy(() -> run(spec))
          .as("cap %d", cap)
          .isInstanceOf(IllegalArgumentException.class);
      assertThat(guard.calls()).containsExactly("close");
    }
    assertThat(Engine.maxOutputCap()).isEqualTo(Execution.maxOutputCap());
  }

  @Test
  void aFailedSpawnClosesTheGuardAndLeavesNoFd() {
    RecordingGuard guard = new RecordingGuard();
    SpawnSpec missing =
        new SpawnSpec("/nonexistent/program", List.of("program"), ChildTests.ENV, "/", true);
    assertThatThrownBy(
            () -> run(new ChildSpec(missing, new byte[] {1}, null, 1 << 20, guard, Long.MAX_VALUE)))
        .isInstanceOf(ErrnoException.class);
    assertThat(guard.calls()).containsExactly("spawn", "close");
    // The fds are compared after each test.
  }

  @Test
  void theLeakCheckSeesAPipeLeftOpen() {
    int[] pipe = Syscalls.pipe2(LibC.O_CLOEXEC());
    try {
      assertThat(ChildTests.newEngineFds(fdsBefore))
          .hasSize(2)
          .allSatisfy(fd -> assertThat(fd).contains("pipe:"));
    } finally {
      Syscalls.close(pipe[0]);
      Syscalls.close(pipe[1]);
    }
    assertThat(ChildTests.newEngineFds(fdsBefore)).isEmpty();
  }

  @Test
  void manyExecsOnBothPathsLeaveNothingBehind() throws Exception {
    // nothingLeft() compares after the test; this one only makes many kinds of exec.
    for (Caller caller : Caller.values()) {
      for (int i = 0; i < 10; i++) {
        assertThat(
                run(caller, spec(sh("cat; echo $$ >&2", true), new byte[] {'x'}, null, 16)).out())
            .isEqualTo("x");
        assertThat(
                run(caller, spec(sh("cat", true), null, new ByteArrayInputStream(new byte[10]), 16))
                    .stdinWritten())
            .isEqualTo(10);
      }
    }
  }
}
