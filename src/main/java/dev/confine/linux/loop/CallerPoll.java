package dev.confine.linux.loop;

import dev.confine.linux.libc.pollfd;
import dev.confine.linux.libc.siginfo_t;
import dev.confine.linux.sys.Syscalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * An {@link FdDriver} for one exec whose caller is a platform thread: the caller polls the child's
 * pidfd and pipes itself and runs the handlers inline, so an exit wakes no other thread. (The event
 * loop costs a hand-off to its thread and back per event, a third runnable thread on a small
 * machine.) A virtual thread must not block in poll, so virtual callers use the loop.
 *
 * <p>Confined to its caller's thread; at most {@value #MAX} fds.
 */
public final class CallerPoll implements FdDriver {
  private static final int MAX = 4;
  // Thread.interrupt() cannot wake a native poll; waiting in slices notices it within this.
  private static final int SLICE_MILLIS = 20;
  private static final ThreadLocal<Buffers> BUFFERS = ThreadLocal.withInitial(Buffers::new);

  /** Per-thread native memory, reused by every exec of the thread. */
  private static final class Buffers {
    final Arena arena = Arena.ofAuto();
    final MemorySegment io = arena.allocate(64 * 1024);
    final MemorySegment siginfo = arena.allocate(siginfo_t.layout());
    final MemorySegment pollfds = pollfd.allocateArray(MAX, arena);
  }

  private final Buffers buffers = BUFFERS.get();
  private final int[] fds = new int[MAX];
  private final int[] masks = new int[MAX];
  private final EventLoop.Handler[] handlers = new EventLoop.Handler[MAX];
  private final boolean[] late = new boolean[MAX];
  private final int[] slot = new int[MAX];
  private int count;

  @Override
  public long register(int fd, int eventMask, EventLoop.Handler handler, boolean isLate) {
    if (count == MAX) {
      throw new IllegalStateException("CallerPoll watches at most " + MAX + " fds");
    }
    fds[count] = fd;
    masks[count] = eventMask;
    handlers[count] = handler;
    late[count] = isLate;
    return count++;
  }

  @Override
  public void close(long token) {
    int i = (int) token;
    if (fds[i] >= 0) {
      Syscalls.close(fds[i]);
      fds[i] = -1;
    }
  }

  @Override
  public int fdOf(long token) {
    return fds[(int) token];
  }

  @Override
  public MemorySegment buffer() {
    return buffers.io;
  }

  @Override
  public MemorySegment siginfo() {
    return buffers.siginfo;
  }

  @Override
  public boolean await(Condition changed, long deadlineNanos) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    long left =
        deadlineNanos == Long.MAX_VALUE ? Long.MAX_VALUE : deadlineNanos - System.nanoTime();
    if (left <= 0) {
      return false;
    }
    // Rounded up, so that a wait never ends just before its deadline and spins.
    int timeout =
        left >= TimeUnit.MILLISECONDS.toNanos(SLICE_MILLIS)
            ? SLICE_MILLIS
            : (int) ((left + 999_999) / 1_000_000);
    MemorySegment pfds = buffers.pollfds;
    long size = pollfd.sizeof();
    int n = 0;
    for (int i = 0; i < count; i++) {
      if (fds[i] >= 0) {
        MemorySegment p = pfds.asSlice(n * size, size);
        pollfd.fd(p, fds[i]);
        pollfd.events(p, (short) masks[i]); // poll and epoll share the bit values on Linux
        pollfd.revents(p, (short) 0);
        slot[n++] = i;
      }
    }
    if (n == 0) {
      // Nothing left to watch and the condition still unmet: only the deadline can end this.
      Thread.sleep(timeout);
      return true;
    }
    int r = Syscalls.poll(pfds, n, timeout);
    if (r <= 0) {
      return true; // a slice ended (or EINTR): the caller re-checks its state and the deadline
    }
    // Outputs before the exit, as the loop does with late registrations.
    for (int pass = 0; pass < 2; pass++) {
      for (int k = 0; k < n; k++) {
        int i = slot[k];
        short revents = pollfd.revents(pfds.asSlice(k * size, size));
        if (revents != 0 && late[i] == (pass == 1) && fds[i] >= 0) {
          handlers[i].onEvents(i, Short.toUnsignedInt(revents));
        }
      }
    }
    return true;
  }
}
