package dev.confine.linux.loop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.sys.Syscalls;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.NativeFds;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * With nothing to watch, run or time, the loop waits in Java, not in {@code epoll_wait}: a thread
 * blocked in a native call holds up the JVM's exit by up to 300 ms (HotSpot waits for threads in
 * native code before it exits). It still wakes at once for a registration, a task or a timer.
 */
class EventLoopIdleTest {
  private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

  @Test
  void anIdleLoopWaitsInJavaAndWakesForEveryKindOfWork() throws Exception {
    HostRequirements.require(NativeAccess.availability());
    EventLoop loop = EventLoop.shared();
    CompletableFuture<Thread> loopThread = new CompletableFuture<>();
    loop.execute(() -> loopThread.complete(Thread.currentThread()));
    Thread t = loopThread.get(10, TimeUnit.SECONDS);
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (loop.registrationCount() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(10); // what earlier tests registered, being closed
    }
    assertThat(loop.registrationCount()).as("registrations left by earlier tests").isZero();
    awaitParked(t);

    // A registration made while it waits is watched.
    int[] pipe = NativeFds.pipe();
    CountDownLatch read = new CountDownLatch(1);
    long token =
        loop.register(
            pipe[0],
            LibC.EPOLLIN(),
            (tk, events) -> {
              NativeFds.readOnce(loop.fdOf(tk), 1);
              read.countDown();
            });
    NativeFds.writeFully(pipe[1], new byte[] {1});
    assertThat(read.await(10, TimeUnit.SECONDS)).as("the handler ran").isTrue();
    loop.close(token);
    Syscalls.close(pipe[1]);
    awaitParked(t);

    // So is a task, and a timer.
    CompletableFuture<Void> task = new CompletableFuture<>();
    loop.execute(() -> task.complete(null));
    task.get(10, TimeUnit.SECONDS);
    awaitParked(t);
    CompletableFuture<Long> timer = new CompletableFuture<>();
    long due = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
    loop.schedule(due, () -> timer.complete(System.nanoTime()));
    assertThat(timer.get(10, TimeUnit.SECONDS) - due).isNotNegative();
    awaitParked(t);
  }

  /** Waits until {@code t} waits in Java (parked); in {@code epoll_wait} it would be RUNNABLE. */
  private static void awaitParked(Thread t) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (t.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(t.getState()).as("the idle loop thread's state").isEqualTo(Thread.State.WAITING);
  }
}
