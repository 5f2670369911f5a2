package dev.confine.linux.loop;

import static dev.confine.testing.NativeFds.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.sys.Syscalls;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.NativeFds;
import dev.confine.testing.OpenFds;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shared {@link EventLoop}: registrations and their level-triggered handlers, suspend and
 * resume, close (by the loop thread, once), tasks and timers from other threads, many fds at once,
 * handlers that register more, and that every fd it was given is closed in the end.
 *
 * <p>No test sleeps to let the loop "get there": {@link #fullIteration} makes the loop go through
 * one more epoll_wait and finish its handlers and tasks, which is what a test waits for before it
 * looks for an absence (a handler that must not run again).
 */
@Timeout(120)
class EventLoopTest {
  private static final byte[] ONE = {1};

  private EventLoop loop;
  private long baselineFds;
  private int baselineRegistrations;
  private int[] probe;
  private long probeToken;
  private final AtomicInteger probeReads = new AtomicInteger();

  @BeforeEach
  void start() throws Exception {
    HostRequirements.require(NativeAccess.availability());
    loop = EventLoop.shared();
    roundTrip(); // the loop runs: its own fds are open before the count
    baselineRegistrations = loop.registrationCount();
    baselineFds = OpenFds.count();
    probe = NativeFds.pipe();
    probeToken =
        loop.register(
            probe[0],
            LibC.EPOLLIN(),
            (token, events) -> {
              NativeFds.readOnce(loop.fdOf(token), 1);
              synchronized (probeReads) {
                probeReads.incrementAndGet();
                probeReads.notifyAll();
              }
            });
  }

  @AfterEach
  void noFdLeft() throws Exception {
    if (probe == null) {
      return;
    }
    loop.close(probeToken);
    Syscalls.close(probe[1]);
    roundTrip();
    assertThat(loop.registrationCount()).isEqualTo(baselineRegistrations);
    assertThat(OpenFds.count()).as("fds once every registration is closed").isEqualTo(baselineFds);
  }

  /** Waits until a task queued now has run on the loop thread. */
  private void roundTrip() throws Exception {
    CompletableFuture<Void> done = new CompletableFuture<>();
    loop.execute(() -> done.complete(null));
    done.get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  /**
   * Waits until the loop has returned from one more epoll_wait (it reported the probe, made ready
   * now) and run every handler of it: an fd still watched and ready would have been reported in
   * that same wait, and its handler run.
   */
  private void fullIteration() throws Exception {
    int before = probeReads.get();
    NativeFds.writeFully(probe[1], ONE);
    long deadline = System.nanoTime() + WAIT.toNanos();
    synchronized (probeReads) {
      while (probeReads.get() == before) {
        long left = deadline - System.nanoTime();
        assertThat(left).as("the probe's handler ran").isPositive();
        TimeUnit.NANOSECONDS.timedWait(probeReads, left);
      }
    }
    roundTrip(); // tasks run after every handler of the wake-up
  }

  private static void await(AtomicInteger counter, int atLeast) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (counter.get() < atLeast) {
      assertThat(System.nanoTime() - deadline)
          .as("waiting for %d calls, have %d", atLeast, counter.get())
          .isNegative();
      TimeUnit.MILLISECONDS.sleep(1);
    }
  }

  @Test
  void aReadyFdCallsItsHandlerOnTheLoopThreadWithItsTokenAndMask() throws Exception {
    int[] p = NativeFds.pipe();
    CompletableFuture<String> seen = new CompletableFuture<>();
    AtomicReference<Long> tokenSeen = new AtomicReference<>();
    long token =
        loop.register(
            p[0],
            LibC.EPOLLIN(),
            (t, events) -> {
              tokenSeen.set(t);
              byte[] b = NativeFds.readOnce(loop.fdOf(t), 16);
              seen.complete(
                  loop.inLoop()
                      + " "
                      + Thread.currentThread().getName()
                      + " "
                      + ((events & LibC.EPOLLIN()) != 0)
                      + " "
                      + new String(b, java.nio.charset.StandardCharsets.US_ASCII));
              loop.close(t);
            });
    try {
      assertThat(loop.inLoop()).isFalse();
      assertThat(loop.fdOf(token)).isEqualTo(p[0]);
      assertThat(loop.registrationCount()).isEqualTo(baselineRegistrations + 2);
      NativeFds.writeFully(p[1], "hi".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      assertThat(seen.get(WAIT.toSeconds(), TimeUnit.SECONDS))
          .isEqualTo("true confine-event-loop true hi");
      assertThat(tokenSeen.get()).isEqualTo(token);
      fullIteration();
      assertThat(loop.fdOf(token)).isEqualTo(-1);
      assertThat(NativeFds.writeOnce(p[1], ONE))
          .as("the read end is closed")
          .isEqualTo(-LibC.EPIPE());
    } finally {
      Syscalls.close(p[1]);
    }
  }

  @Test
  void theEndOfAPipeIsReportedAsHangUp() throws Exception {
    int[] p = NativeFds.pipe();
    CompletableFuture<Integer> mask = new CompletableFuture<>();
    loop.register(
        p[0],
        LibC.EPOLLIN(),
        (t, events) -> {
          mask.complete(events);
          loop.close(t);
        });
    Syscalls.close(p[1]);
    assertThat(mask.get(WAIT.toSeconds(), TimeUnit.SECONDS) & LibC.EPOLLHUP()).isNotZero();
  }

  @Test
  void handlersAreLevelTriggeredAndSuspendStopsThemUntilResume() throws Exception {
    int[] p = NativeFds.pipe();
    AtomicInteger calls = new AtomicInteger();
    // The handler never reads: the fd stays ready.
    long token = loop.register(p[0], LibC.EPOLLIN(), (t, events) -> calls.incrementAndGet());
    try {
      NativeFds.writeFully(p[1], ONE);
      await(calls, 3);

      loop.suspend(token);
      fullIteration(); // an event collected before the suspend may still come in this one
      int suspended = calls.get();
      fullIteration();
      fullIteration();
      assertThat(calls.get()).as("calls while suspended").isEqualTo(suspended);
      assertThat(loop.fdOf(token)).as("suspended, not closed").isEqualTo(p[0]);

      loop.resume(token);
      await(calls, suspended + 3);
    } finally {
      loop.close(token);
      Syscalls.close(p[1]);
    }
  }

  @Test
  void closeStopsTheHandlerClosesTheFdOnceAndNeverTouchesTheNumberAgain() throws Exception {
    int[] p = NativeFds.pipe();
    int fd = p[0];
    AtomicInteger calls = new AtomicInteger();
    long token = loop.register(fd, LibC.EPOLLIN(), (t, events) -> calls.incrementAndGet());
    int[] reuse = null;
    int renumbered = -1;
    try {
      NativeFds.writeFully(p[1], ONE);
      await(calls, 1);
      loop.close(token); // from another thread: done by the loop thread
      fullIteration();
      int closed = calls.get();
      fullIteration();
      assertThat(calls.get()).isEqualTo(closed);
      assertThat(NativeFds.writeOnce(p[1], ONE)).isEqualTo(-LibC.EPIPE());
      assertThat(loop.fdOf(token)).isEqualTo(-1);
      assertThat(loop.registrationCount()).isEqualTo(baselineRegistrations + 1);

      // The number is free again; whatever gets it next is not the loop's to close.
      reuse = NativeFds.pipe();
      if (reuse[0] != fd && reuse[1] != fd) {
        renumbered = Syscalls.fcntl(reuse[0], 0 /* F_DUPFD */, fd);
        assertThat(renumbered).as("the closed number, lowest free from it").isEqualTo(fd);
      }
      String what = NativeFds.target(fd);
      loop.close(token);
      loop.suspend(token);
      loop.resume(token);
      roundTrip();
      assertThat(NativeFds.target(fd)).isEqualTo(what).startsWith("pipe:");
    } finally {
      Syscalls.close(p[1]);
      if (reuse != null) {
        NativeFds.closeAll(reuse[0], reuse[1], renumbered);
      }
    }
  }

  @Test
  void aFailedRegistrationLeavesTheFdToTheCaller() throws Exception {
    int[] p = NativeFds.pipe();
    long token = loop.register(p[0], LibC.EPOLLIN(), (t, events) -> {});
    try {
      int count = loop.registrationCount();
      assertThatThrownBy(() -> loop.register(p[0], LibC.EPOLLIN(), (t, events) -> {}))
          .isInstanceOfSatisfying(
              ErrnoException.class, e -> assertThat(e.errno()).isEqualTo(17 /* EEXIST */));
      assertThatThrownBy(() -> loop.register(-1, LibC.EPOLLIN(), (t, events) -> {}))
          .isInstanceOfSatisfying(
              ErrnoException.class,
              e -> {
                assertThat(e.call()).isEqualTo("epoll_ctl(ADD)");
                assertThat(e.errno()).isEqualTo(LibC.EBADF());
              });
      assertThat(loop.registrationCount()).isEqualTo(count);
      assertThat(NativeFds.isOpen(p[0])).isTrue();
      assertThat(loop.fdOf(token)).isEqualTo(p[0]);
    } finally {
      loop.close(token);
      Syscalls.close(p[1]);
      roundTrip();
    }
  }

  @Test
  void aHandlerThatThrowsLosesItsRegistrationAndTheLoopGoesOn() throws Exception {
    int[] p = NativeFds.pipe();
    AtomicInteger calls = new AtomicInteger();
    long token =
        loop.register(
            p[0],
            LibC.EPOLLIN(),
            (t, events) -> {
              calls.incrementAndGet();
              throw new IllegalStateException("a handler bug (logged by the loop: expected)");
            });
    try {
      NativeFds.writeFully(p[1], ONE);
      await(calls, 1);
      fullIteration(); // the loop still serves the others
      assertThat(calls.get()).isEqualTo(1);
      assertThat(loop.fdOf(token)).isEqualTo(-1);
      assertThat(NativeFds.writeOnce(p[1], ONE)).isEqualTo(-LibC.EPIPE());
    } finally {
      Syscalls.close(p[1]);
    }
  }

  @Test
  void lateHandlersRunAfterTheOthersOfTheSameWakeUp() throws Exception {
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch done = new CountDownLatch(2);
    // Both pipes are ready before they are registered, so one epoll_wait reports both, the late
    // one first (it was registered first).
    loop.execute(
        () -> {
          int[] late = NativeFds.pipe();
          int[] early = NativeFds.pipe();
          NativeFds.writeFully(late[1], ONE);
          NativeFds.writeFully(early[1], ONE);
          Syscalls.close(late[1]);
          Syscalls.close(early[1]);
          loop.register(late[0], LibC.EPOLLIN(), handler("late", order, done), true);
          loop.register(early[0], LibC.EPOLLIN(), handler("early", order, done), false);
        });
    assertThat(done.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(order).containsExactly("early", "late");
  }

  private EventLoop.Handler handler(String name, List<String> order, CountDownLatch done) {
    return (t, events) -> {
      order.add(name);
      loop.close(t);
      done.countDown();
    };
  }

  @Test
  void moreReadyFdsThanOneWaitReturnsAreAllHandled() throws Exception {
    int n = 600; // MAX_EVENTS is 256 per epoll_wait
    CountDownLatch done = new CountDownLatch(n);
    AtomicInteger wrongThread = new AtomicInteger();
    List<int[]> pipes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int[] p = NativeFds.pipe();
      pipes.add(p);
      NativeFds.writeFully(p[1], ONE);
    }
    // Registered from the loop thread, all at once: they are all ready in its next wait.
    loop.execute(
        () -> {
          for (int[] p : pipes) {
            loop.register(
                p[0],
                LibC.EPOLLIN(),
                (t, events) -> {
                  if (!loop.inLoop()) {
                    wrongThread.incrementAndGet();
                  }
                  NativeFds.readOnce(loop.fdOf(t), 1);
                  loop.close(t);
                  done.countDown();
                });
          }
        });
    try {
      assertThat(done.await(WAIT.toSeconds(), TimeUnit.SECONDS))
          .as("%d left", done.getCount())
          .isTrue();
      assertThat(wrongThread).hasValue(0);
    } finally {
      pipes.forEach(p -> Syscalls.close(p[1]));
    }
  }

  @Test
  void aHandlerCanRegisterNewFdsWhoseHandlersRunInTurn() throws Exception {
    int depth = 50;
    CompletableFuture<Integer> last = new CompletableFuture<>();
    int[] first = NativeFds.pipe();
    NativeFds.writeFully(first[1], ONE);
    Syscalls.close(first[1]);
    loop.register(first[0], LibC.EPOLLIN(), chain(1, depth, last));
    assertThat(last.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(depth);
  }

  private EventLoop.Handler chain(int level, int depth, CompletableFuture<Integer> last) {
    return (t, events) -> {
      loop.close(t);
      if (level == depth) {
        last.complete(level);
        return;
      }
      int[] next = NativeFds.pipe();
      NativeFds.writeFully(next[1], ONE);
      Syscalls.close(next[1]);
      loop.register(next[0], LibC.EPOLLIN(), chain(level + 1, depth, last));
    };
  }

  @Test
  void tasksFromManyThreadsAllRunOnTheLoopThreadEachThreadsInOrder() throws Exception {
    int threads = 8;
    int each = 2_000;
    int[] next = new int[threads]; // loop thread only
    AtomicInteger outOfOrder = new AtomicInteger();
    AtomicInteger offLoop = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(threads * each);
    List<Thread> submitters = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      submitters.add(
          Thread.ofPlatform()
              .start(
                  () -> {
                    for (int i = 0; i < each; i++) {
                      int seq = i;
                      loop.execute(
                          () -> {
                            if (!loop.inLoop()) {
                              offLoop.incrementAndGet();
                            }
                            if (next[id]++ != seq) {
                              outOfOrder.incrementAndGet();
                            }
                            done.countDown();
                          });
                    }
                  }));
    }
    for (Thread s : submitters) {
      s.join();
    }
    assertThat(done.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(offLoop).hasValue(0);
    assertThat(outOfOrder).hasValue(0);
  }

  @Test
  void aTimerRunsOnTheLoopThreadNotBeforeItsDeadline() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(30);
    CompletableFuture<Long> ranAt = new CompletableFuture<>();
    loop.schedule(
        deadline,
        () -> {
          if (loop.inLoop()) {
            ranAt.complete(System.nanoTime());
          } else {
            ranAt.completeExceptionally(new AssertionError("not on the loop thread"));
          }
        });
    assertThat(ranAt.get(WAIT.toSeconds(), TimeUnit.SECONDS) - deadline).isNotNegative();
  }

  @Test
  void aCancelledTimerDoesNotRunAndAFarOneDelaysNothing() throws Exception {
    long now = System.nanoTime();
    AtomicInteger cancelledRan = new AtomicInteger();
    EventLoop.Timer far =
        loop.schedule(now + TimeUnit.HOURS.toNanos(1), cancelledRan::incrementAndGet);
    EventLoop.Timer cancelled =
        loop.schedule(now + TimeUnit.MILLISECONDS.toNanos(20), cancelledRan::incrementAndGet);
    cancelled.cancel();
    CompletableFuture<Void> later = new CompletableFuture<>();
    // Due after the cancelled one: had that not been cancelled, it would have run first.
    loop.schedule(now + TimeUnit.MILLISECONDS.toNanos(21), () -> later.complete(null));
    later.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    roundTrip();
    far.cancel();
    assertThat(cancelledRan).hasValue(0);
  }

  @Test
  void aCancelledTimersTaskIsNotKeptUntilItsDeadline() throws Exception {
    // What a session's timeout timer holds: the SessionProcess, its output buffers, its listener.
    Object payload = new byte[1 << 20];
    WeakReference<Object> ref = new WeakReference<>(payload);
    EventLoop.Timer[] t = {
      loop.schedule(System.nanoTime() + TimeUnit.HOURS.toNanos(1), payload::hashCode)
    };
    roundTrip(); // in the heap now
    t[0].cancel();
    t[0] = null;
    payload = null;
    fullIteration(); // the loop has run (and computed its next timeout) since the cancel
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (ref.get() != null) {
      assertThat(System.nanoTime() - deadline)
          .as("the cancelled task is still reachable")
          .isNegative();
      System.gc();
      TimeUnit.MILLISECONDS.sleep(10);
    }
  }

  @Test
  void dueTimersRunInDeadlineOrderAndTiesInTheOrderScheduled() throws Exception {
    List<Integer> ran = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch done = new CountDownLatch(6);
    // Scheduled on the loop thread, all already due: they run together, after this task.
    loop.execute(
        () -> {
          long now = System.nanoTime();
          long[] ago = {10, 30, 20, 30, 30, 40};
          for (int i = 0; i < ago.length; i++) {
            int id = i;
            loop.schedule(
                now - TimeUnit.MILLISECONDS.toNanos(ago[i]),
                () -> {
                  ran.add(id);
                  done.countDown();
                });
          }
        });
    assertThat(done.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(ran).containsExactly(5, 1, 3, 4, 2, 0);
  }

  @Test
  void aTaskThatThrowsDoesNotStopTheLoop() throws Exception {
    loop.execute(
        () -> {
          throw new IllegalStateException("a task bug (logged by the loop: expected)");
        });
    loop.schedule(
        System.nanoTime(),
        () -> {
          throw new IllegalStateException("a timer bug (logged by the loop: expected)");
        });
    fullIteration();
  }

  @Test
  void theReadBufferIs64KiB() throws Exception {
    CompletableFuture<Integer> size = new CompletableFuture<>();
    loop.execute(() -> size.complete(loop.readBufferView().capacity()));
    assertThat(size.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(64 * 1024);
    assertThat(loop.readBuffer().byteSize()).isEqualTo(64 * 1024);
  }
}
