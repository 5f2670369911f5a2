package dev.confine.linux.loop;

import static dev.confine.testing.NativeFds.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.sys.Syscalls;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.NativeFds;
import dev.confine.testing.OpenFds;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CallerPoll}: the caller's own thread polls at most four fds and runs their handlers
 * inline, outputs before late ones; deadlines, interrupts and close.
 */
@Timeout(120)
class CallerPollTest {
  private static final byte[] ONE = {1};

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final List<int[]> pipes = new ArrayList<>();
  private long baselineFds;

  @BeforeEach
  void start() {
    HostRequirements.require(NativeAccess.availability());
    new CallerPoll(); // its thread's buffers exist before the count
    baselineFds = OpenFds.count();
  }

  @AfterEach
  void noFdLeft() {
    assertThat(OpenFds.count()).isEqualTo(baselineFds);
  }

  /** A pipe whose read end goes to the poll; its write end is closed by {@link #closeWriters}. */
  private int[] pipe() {
    int[] p = NativeFds.pipe();
    pipes.add(p);
    return p;
  }

  private void closeWriters() {
    pipes.forEach(p -> Syscalls.close(p[1]));
    pipes.clear();
  }

  /** Waits in slices until {@code done} or the deadline; how many waits returned true. */
  private int awaitUntil(CallerPoll poll, java.util.function.BooleanSupplier done)
      throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    int waits = 0;
    lock.lock();
    try {
      while (!done.getAsBoolean()) {
        assertThat(poll.await(changed, deadline)).as("deadline reached first").isTrue();
        waits++;
      }
    } finally {
      lock.unlock();
    }
    return waits;
  }

  @Test
  void aReadyFdRunsItsHandlerInlineOnTheCallersThread() throws Exception {
    CallerPoll poll = new CallerPoll();
    int[] p = pipe();
    List<String> calls = new ArrayList<>();
    long token =
        poll.register(
            p[0],
            LibC.POLLIN(),
            (t, events) -> {
              byte[] b = NativeFds.readOnce(poll.fdOf(t), 8);
              calls.add(Thread.currentThread().getName() + " " + t + " " + events + " " + b.length);
              poll.close(t);
            },
            false);
    try {
      assertThat(poll.fdOf(token)).isEqualTo(p[0]);
      NativeFds.writeFully(p[1], new byte[] {1, 2, 3});
      awaitUntil(poll, () -> !calls.isEmpty());
      assertThat(calls)
          .containsExactly(
              Thread.currentThread().getName() + " " + token + " " + LibC.POLLIN() + " 3");
      assertThat(poll.fdOf(token)).isEqualTo(-1);
      assertThat(NativeFds.writeOnce(p[1], ONE)).as("closed by close()").isEqualTo(-LibC.EPIPE());
    } finally {
      closeWriters();
    }
  }

  @Test
  void lateHandlersRunAfterTheOthersOfTheSameWait() throws Exception {
    CallerPoll poll = new CallerPoll();
    List<String> order = new ArrayList<>();
    int[] late = pipe();
    int[] early = pipe();
    // Registered late first: without the two passes it would run first.
    poll.register(
        late[0],
        LibC.POLLIN(),
        (t, e) -> {
          order.add("late");
          poll.close(t);
        },
        true);
    poll.register(
        early[0],
        LibC.POLLIN(),
        (t, e) -> {
          order.add("early");
          poll.close(t);
        },
        false);
    NativeFds.writeFully(late[1], ONE);
    NativeFds.writeFully(early[1], ONE);
    try {
      awaitUntil(poll, () -> order.size() == 2);
      assertThat(order).containsExactly("early", "late");
    } finally {
      closeWriters();
    }
  }

  @Test
  void aClosedFdIsNoLongerPolledAndCloseIsIdempotent() throws Exception {
    CallerPoll poll = new CallerPoll();
    int[] a = pipe();
    int[] b = pipe();
    List<String> calls = new ArrayList<>();
    long ta = poll.register(a[0], LibC.POLLIN(), (t, e) -> calls.add("a " + e), false);
    long tb =
        poll.register(
            b[0],
            LibC.POLLIN(),
            (t, e) -> {
              calls.add("b");
              poll.close(t);
            },
            false);
    try {
      poll.close(ta);
      poll.close(ta);
      // a's number is free: a poll that still held it would report POLLNVAL to a's handler.
      NativeFds.writeFully(b[1], ONE);
      awaitUntil(poll, () -> calls.contains("b"));
      assertThat(calls).containsExactly("b");
      assertThat(NativeFds.writeOnce(a[1], ONE)).isEqualTo(-LibC.EPIPE());
      assertThat(poll.fdOf(tb)).isEqualTo(-1);
    } finally {
      closeWriters();
    }
  }

  @Test
  void atMostFourFds() {
    CallerPoll poll = new CallerPoll();
    for (int i = 0; i < 4; i++) {
      long t = poll.register(pipe()[0], LibC.POLLIN(), (tok, e) -> {}, false);
      assertThat(t).isEqualTo(i);
    }
    int[] fifth = pipe();
    try {
      assertThatThrownBy(() -> poll.register(fifth[0], LibC.POLLIN(), (t, e) -> {}, false))
          .isInstanceOf(IllegalStateException.class);
    } finally {
      for (long t = 0; t < 4; t++) {
        poll.close(t);
      }
      Syscalls.close(fifth[0]); // refused: still the caller's
      closeWriters();
    }
  }

  @Test
  void aDeadlineThatHasPassedEndsTheWaitWithoutRunningHandlers() throws Exception {
    CallerPoll poll = new CallerPoll();
    int[] p = pipe();
    List<Integer> calls = new ArrayList<>();
    long t = poll.register(p[0], LibC.POLLIN(), (tok, e) -> calls.add(e), false);
    try {
      NativeFds.writeFully(p[1], ONE);
      assertThat(poll.await(changed, System.nanoTime() - 1)).isFalse();
      assertThat(calls).isEmpty();
    } finally {
      poll.close(t);
      closeWriters();
    }
  }

  @Test
  void waitingForADeadlineDoesNotSpin() throws Exception {
    // 30 ms: one 20 ms slice, then the rest rounded up; rounding down would poll with a zero
    // timeout over and over in the last millisecond.
    for (boolean withFd : new boolean[] {true, false}) {
      CallerPoll poll = new CallerPoll();
      long t = -1;
      if (withFd) {
        t = poll.register(pipe()[0], LibC.POLLIN(), (tok, e) -> {}, false);
      }
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(30);
      int waits = 0;
      while (poll.await(changed, deadline)) {
        waits++;
        assertThat(waits)
            .as("waits before a 30 ms deadline, with an fd: %s", withFd)
            .isLessThan(10);
      }
      assertThat(System.nanoTime() - deadline).as("ended before its deadline").isNotNegative();
      if (t >= 0) {
        poll.close(t);
      }
    }
    closeWriters();
  }

  @Test
  void anInterruptEndsTheWaitWithinASliceAndIsCleared() throws Exception {
    CallerPoll poll = new CallerPoll();
    Thread.currentThread().interrupt();
    assertThatThrownBy(() -> poll.await(changed, Long.MAX_VALUE))
        .isInstanceOf(InterruptedException.class);
    assertThat(Thread.interrupted()).isFalse();

    // A thread asleep in poll (no deadline) notices an interrupt at its next slice.
    CompletableFuture<Throwable> ended = new CompletableFuture<>();
    CompletableFuture<Void> waiting = new CompletableFuture<>();
    Thread waiter =
        Thread.ofPlatform()
            .start(
                () -> {
                  CallerPoll mine = new CallerPoll();
                  int[] p = NativeFds.pipe();
                  long t = mine.register(p[0], LibC.POLLIN(), (tok, e) -> {}, false);
                  try {
                    waiting.complete(null);
                    while (true) {
                      mine.await(changed, Long.MAX_VALUE);
                    }
                  } catch (Throwable e) {
                    ended.complete(e);
                  } finally {
                    mine.close(t);
                    Syscalls.close(p[1]);
                  }
                });
    waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    waiter.interrupt();
    assertThat(ended.get(WAIT.toSeconds(), TimeUnit.SECONDS))
        .isInstanceOf(InterruptedException.class);
    waiter.join();
  }

  @Test
  void eachThreadHasItsOwnBuffersAndItsPollsShareThem() throws Exception {
    CallerPoll a = new CallerPoll();
    CallerPoll b = new CallerPoll();
    assertThat(a.buffer().address()).isEqualTo(b.buffer().address());
    assertThat(a.siginfo().address()).isEqualTo(b.siginfo().address());
    assertThat(a.buffer().byteSize()).isEqualTo(64 * 1024);
    CompletableFuture<MemorySegment> other = new CompletableFuture<>();
    Thread.ofPlatform().start(() -> other.complete(new CallerPoll().buffer())).join();
    assertThat(other.get().address()).isNotEqualTo(a.buffer().address());
  }
}
