package dev.confine.linux.loop;

import dev.confine.linux.spawn.Reaping;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * Where an {@code Execution}'s fds are watched and its handlers run: on the shared {@link
 * EventLoop}, or on the waiting caller's own thread ({@link CallerPoll}). Handlers are written
 * once, against this interface; only the waiting differs.
 */
public interface FdDriver {
  /** Watches {@code fd}; the driver owns it from now on. A late handler runs after the others. */
  long register(int fd, int eventMask, EventLoop.Handler handler, boolean late);

  /** Stops watching and closes the fd of {@code token}. Idempotent. */
  void close(long token);

  /** The fd of a live registration, inside a handler. */
  int fdOf(long token);

  /** A buffer for reads and writes inside one handler call. */
  MemorySegment buffer();

  /** Where waitid stores the child's siginfo, inside a handler call. */
  MemorySegment siginfo();

  /**
   * Waits, with {@code lock}'s owner holding it, until {@code changed} may have been signalled or
   * until {@code deadlineNanos} ({@code Long.MAX_VALUE}: none).
   *
   * @return false when the deadline has passed
   */
  boolean await(Condition changed, long deadlineNanos) throws InterruptedException;

  /** The shared event loop: handlers run on its thread, callers wait on the condition. */
  static FdDriver loop() {
    return LOOP;
  }

  FdDriver LOOP =
      new FdDriver() {
        private final EventLoop loop = EventLoop.shared();

        @Override
        public long register(int fd, int eventMask, EventLoop.Handler handler, boolean late) {
          return loop.register(fd, eventMask, handler, late);
        }

        @Override
        public void close(long token) {
          loop.close(token);
        }

        @Override
        public int fdOf(long token) {
          return loop.fdOf(token);
        }

        @Override
        public MemorySegment buffer() {
          return loop.readBuffer();
        }

        @Override
        public MemorySegment siginfo() {
          return Reaping.SIGINFO;
        }

        @Override
        public boolean await(Condition changed, long deadlineNanos) throws InterruptedException {
          if (deadlineNanos == Long.MAX_VALUE) {
            changed.await();
            return true;
          }
          long left = deadlineNanos - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          changed.await(left, TimeUnit.NANOSECONDS);
          return true;
        }
      };
}
