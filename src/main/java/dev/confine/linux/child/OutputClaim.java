package dev.confine.linux.child;

import dev.confine.linux.child.SessionProcess.CallerRead;
import dev.confine.linux.child.SessionProcess.Listener;
import dev.confine.linux.child.SessionProcess.Source;
import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.pollfd;
import dev.confine.linux.loop.EventLoop;
import dev.confine.linux.loop.ReadSpin;
import dev.confine.linux.sys.Syscalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The claim on a {@link SessionProcess}'s outputs (the stdout and stderr pipes, or the pty master):
 * who reads them, the loop's handlers or a platform thread waiting in a read of the session ({@link
 * #readOnCaller}), one at a time, and when each has ended. Output fds are closed only under the
 * claim, so a client never reads a closed (or reused) fd; what is read goes to the session's {@link
 * Listener}. Lock order: the claim, then the listener's locks.
 */
final class OutputClaim {
  // How long a client waiting in a read polls the outputs itself before it waits for the loop.
  private static final int CALLER_SLICE_MILLIS = 10;
  static final long CALLER_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(CALLER_SLICE_MILLIS);
  // While a client keeps reading, the loop's check whether it stopped backs off from one slice to
  // this: each check wakes the loop, a third busy thread on two CPUs.
  private static final long RECLAIM_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(80);
  private static final long RECLAIM_CONFIRM_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final int QUIET_SKIP_MAX = 32;

  private final EventLoop loop;
  private final Listener listener;
  private final Runnable onAllEnded;

  // Loop thread only.
  private int openOutputs;
  private final long[] outputTokens = {-1, -1}; // set once, under claim, before outputsWatched
  private final boolean[] outputOpen = {false, false};

  private final ReentrantLock claim = new ReentrantLock(); // the claim (see the class comment)
  // Under claim: each open output's fd (-1 once closed) and stream, for a reading client.
  private final int[] claimFds = {-1, -1};
  private final int[] claimStreams = {-1, -1};
  // Under claim: the open outputs (all of them: none opens later) are off the loop's watch list.
  private boolean callerReads;
  private volatile long lastCallerRead; // written under claim, read by the loop's check without it
  private boolean reclaimPending; // under claim: the loop's check is scheduled
  private long reclaimDelay = CALLER_SLICE_NANOS; // loop thread only: until its next check
  private boolean reclaimConfirming; // loop thread only: the client looked idle at the last check
  private final ReadSpin spin = new ReadSpin(); // under claim
  private int leadSlot; // under claim: the output that gave something last, read first
  private final int[] skipEvery = {1, 1}; // under claim: a quiet output is read every n-th time
  private final int[] skipLeft = {0, 0}; // under claim: until its next read
  private final FdSource source = new FdSource(); // under claim
  private volatile boolean outputsWatched;

  /**
   * The claim on outputs yet to be {@linkplain #watch watched}, whose reads go to {@code listener}.
   *
   * @param onAllEnded run on the loop thread once every watched output has ended and is closed
   */
  OutputClaim(EventLoop loop, Listener listener, Runnable onAllEnded) {
    this.loop = loop;
    this.listener = listener;
    this.onAllEnded = onAllEnded;
  }

  /**
   * Watches the outputs {@code fds} of the streams {@code streams} (one slot each, at most two),
   * from the loop thread; until then no client claims them. Call before the child's pidfd is
   * registered, so that the outputs are counted before the exit is seen.
   */
  void watch(int[] streams, int[] fds) {
    for (int fd : fds) {
      Syscalls.setNonBlocking(fd);
    }
    // Registered from the loop thread so that its bookkeeping needs no lock; no client claims the
    // outputs before they are all watched.
    loop.execute(
        () -> {
          claim.lock();
          try {
            for (int slot = 0; slot < fds.length; slot++) {
              openOutputs++;
              outputOpen[slot] = true;
              outputTokens[slot] =
                  loop.register(fds[slot], LibC.EPOLLIN(), reader(streams[slot], slot));
              claimFds[slot] = fds[slot];
              claimStreams[slot] = streams[slot];
            }
          } finally {
            claim.unlock();
          }
          outputsWatched = true;
        });
  }

  /** On the loop thread: whether every watched output has ended (none are until {@link #watch}). */
  boolean allEnded() {
    return openOutputs == 0;
  }

  private EventLoop.Handler reader(int stream, int slot) {
    return (token, events) -> {
      if (!claim.tryLock()) {
        return; // a client reads the outputs itself; its fds are not watched meanwhile
      }
      try {
        readOnLoop(stream, slot, token);
      } finally {
        claim.unlock();
      }
    };
  }

  private void readOnLoop(int stream, int slot, long token) {
    if (readOutput(stream, loop.fdOf(token), loop.readBufferView()) < 0) {
      outputClosed(slot);
    }
  }

  /**
   * Under the claim: lets the listener read the output {@code fd} (until it is empty, or {@value
   * ChildLifecycle#READS_PER_EVENT} reads: then the loop or the client comes back for the rest).
   *
   * @return the number of bytes read, or -1 when the output ended (end of file; EIO on a pty
   *     master, which means every slave fd is closed)
   */
  private long readOutput(int stream, int fd, ByteBuffer buffer) {
    source.fd = fd;
    source.last = 1;
    long got = listener.output(stream, source, buffer, ChildLifecycle.READS_PER_EVENT);
    long last = source.last;
    return last <= 0 && last != -LibC.EAGAIN() && last != -LibC.EINTR() ? -1 : got;
  }

  /**
   * The output being read, under the claim; a read remembers what it returned.
   *
   * <p>It reads into the reading thread's small native buffer, which the listener copies from,
   * rather than straight into the listener's heap memory (a critical downcall may pass a heap array
   * to read): the kernel copies while it holds the pipe's lock, and a log's memory, cycled through
   * its bound, is mostly out of the cache, so the pipe's writer would wait on that lock
   * (docs/benchmarks.md).
   */
  private static final class FdSource implements Source {
    int fd;
    long last;
    private ByteBuffer view; // the buffer of the last read, and its memory
    private MemorySegment memory;

    @Override
    public long read(ByteBuffer into) {
      if (into != view) {
        memory = MemorySegment.ofBuffer(into.duplicate().clear());
        view = into;
      }
      return last = Syscalls.read(fd, memory, memory.byteSize());
    }
  }

  /**
   * Reads the child's output on the calling platform thread while it waits in a read of the
   * session, instead of waiting for the loop thread to read it and hand it over: on two CPUs that
   * takes a third busy thread (the loop) out of a stream's path. The outputs are claimed and taken
   * off the loop's watch list, polled for at most {@value #CALLER_SLICE_MILLIS} ms (or until {@code
   * deadlineNanos}), and read until the pipe is empty; what was read goes to the listener. While
   * output keeps coming they stay off the loop's list between reads, so that the loop is not woken
   * by every write of the child; they go back to it when a slice passes without output, or when no
   * client has read for a slice (the loop's reclaim check, which backs off from one slice to {@code
   * RECLAIM_MAX_NANOS} while a client keeps reading). An output the client finds ended is not
   * watched again: the loop only closes it.
   *
   * @return what was found, as {@link SessionProcess#readOnCaller} says
   */
  CallerRead readOnCaller(long deadlineNanos) {
    if (!outputsWatched || Thread.currentThread().isVirtual()) {
      return CallerRead.NONE;
    }
    if (!claim.tryLock()) {
      // The loop or another client holds the outputs; with them off the loop's watch list nothing
      // need come of that (the loop may only have checked on a reading client): look again soon.
      return CallerRead.BUSY;
    }
    try {
      CallerBuffers b = CALLER_BUFFERS.get();
      int n = 0;
      if (claimFds[leadSlot] >= 0) { // the output that gave something last first
        b.slots[n++] = leadSlot;
      }
      if (claimFds[1 - leadSlot] >= 0) {
        b.slots[n++] = 1 - leadSlot;
      }
      long left =
          deadlineNanos == Long.MAX_VALUE ? Long.MAX_VALUE : deadlineNanos - System.nanoTime();
      if (n == 0 || left <= 0) {
        return CallerRead.NONE;
      }
      int timeout =
          (int)
              Math.min(
                  CALLER_SLICE_MILLIS, (Math.min(left, Long.MAX_VALUE / 2) + 999_999) / 1_000_000);
      if (!callerReads) {
        for (int i = 0; i < n; i++) {
          loop.suspend(outputTokens[b.slots[i]]);
        }
        callerReads = true;
        if (!reclaimPending) {
          reclaimPending = true;
          loop.schedule(System.nanoTime() + CALLER_SLICE_NANOS, this::reclaimOutputs);
        }
      }
      // Read first: while output streams in there usually is some, and a poll would only cost.
      // While one output streams, a quiet other one is tried less and less often (every 2nd, 4th,
      // ... up to every QUIET_SKIP_MAX-th time): a read that finds nothing is a system call per
      // chunk. A poll finds it whenever the streaming one is quiet, and it is read every time again
      // once it gave some.
      boolean progress = false;
      for (int i = 0; i < n; i++) {
        int slot = b.slots[i];
        if (progress && --skipLeft[slot] > 0) {
          continue;
        }
        boolean got = readOnCaller(slot, b);
        if (got) {
          skipEvery[slot] = 1;
          leadSlot = slot;
        } else if (progress) {
          skipEvery[slot] = Math.min(2 * skipEvery[slot], QUIET_SKIP_MAX);
        }
        skipLeft[slot] = skipEvery[slot];
        progress |= got;
      }
      if (!progress) {
        long size = pollfd.sizeof();
        for (int i = 0; i < n; i++) {
          MemorySegment p = b.pollfds.asSlice(i * size, size);
          pollfd.fd(p, claimFds[b.slots[i]]);
          pollfd.events(p, (short) LibC.POLLIN());
          pollfd.revents(p, (short) 0);
        }
        if (spinPoll(b.pollfds, n) > 0 || Syscalls.poll(b.pollfds, n, timeout) > 0) {
          for (int i = 0; i < n; i++) {
            int slot = b.slots[i];
            if (pollfd.revents(b.pollfds.asSlice(i * size, size)) != 0) {
              progress |= readOnCaller(slot, b);
            }
          }
        }
      }
      lastCallerRead = System.nanoTime();
      if (progress) {
        spin.output(lastCallerRead);
      } else {
        giveOutputsBack(); // quiet: the loop watches again
      }
      return progress || Thread.currentThread().isInterrupted() ? CallerRead.SOME : CallerRead.NONE;
    } finally {
      claim.unlock();
    }
  }

  /**
   * Under the claim, before a client sleeps in {@code poll} on its {@code n} outputs: while they
   * stream, polls them without sleeping for a few microseconds first (see {@link ReadSpin}).
   *
   * @return what the last poll returned (positive: an output is ready), 0 when it did not spin
   */
  private int spinPoll(MemorySegment pollfds, int n) {
    long now = System.nanoTime();
    if (!spin.spinBefore(now)) {
      return 0;
    }
    long until = now + ReadSpin.SPIN_NANOS;
    int ready;
    do {
      ready = Syscalls.poll(pollfds, n, 0);
    } while (ready == 0 && System.nanoTime() - until < 0);
    spin.spun(ready > 0);
    return ready;
  }

  /** Under the claim: the loop watches the open outputs again. */
  private void giveOutputsBack() {
    if (callerReads) {
      callerReads = false;
      for (int slot = 0; slot < 2; slot++) {
        if (claimFds[slot] >= 0) {
          loop.resume(outputTokens[slot]);
        }
      }
    }
  }

  /**
   * On the loop thread, a slice after a client took the outputs: takes them back once no client has
   * read them for a slice (it stopped reading with output still coming), else looks again, each
   * time a little later (up to {@code RECLAIM_MAX_NANOS}) while clients keep reading.
   */
  private void reclaimOutputs() {
    long now = System.nanoTime();
    // Checked without the claim: taking it, however briefly, could turn away a client that comes
    // to read just then, and with the outputs off the loop's list that client would wait for
    // nothing (it tries again after a short pause, CallerRead.BUSY; better not to make it).
    if (now - lastCallerRead < CALLER_SLICE_NANOS) {
      reclaimConfirming = false;
      reclaimDelay = Math.min(2 * reclaimDelay, RECLAIM_MAX_NANOS);
      loop.schedule(now + reclaimDelay, this::reclaimOutputs);
      return;
    }
    if (!reclaimConfirming) {
      // A pause of the whole JVM (a GC) stops the client and this check alike, and the check may
      // run first when it ends: look once more before taking over from a client that reads on.
      reclaimConfirming = true;
      loop.schedule(now + RECLAIM_CONFIRM_NANOS, this::reclaimOutputs);
      return;
    }
    reclaimConfirming = false;
    if (!claim.tryLock()) {
      loop.schedule(now + CALLER_SLICE_NANOS, this::reclaimOutputs);
      return;
    }
    try {
      giveOutputsBack(); // nothing to do when the client already gave them back
      reclaimPending = false;
    } finally {
      claim.unlock();
    }
    reclaimDelay = CALLER_SLICE_NANOS;
  }

  private boolean readOnCaller(int slot, CallerBuffers b) {
    long r = readOutput(claimStreams[slot], claimFds[slot], b.ioView);
    if (r < 0) {
      // No client reads the fd again, and it stays off the loop's watch list (no end of file for
      // the loop to find, and fight the claim for): the loop only closes it and counts it.
      claimFds[slot] = -1;
      loop.execute(() -> outputEnded(slot));
    }
    return r != 0;
  }

  /** A reading client's native memory, reused by every read of its thread. */
  private static final class CallerBuffers {
    final Arena arena = Arena.ofAuto();
    final MemorySegment io = arena.allocate(64 * 1024);
    final ByteBuffer ioView = io.asByteBuffer();
    final MemorySegment pollfds = pollfd.allocateArray(2, arena);
    final int[] slots = new int[2];
  }

  private static final ThreadLocal<CallerBuffers> CALLER_BUFFERS =
      ThreadLocal.withInitial(CallerBuffers::new);

  /** On the loop thread, holding the claim (no client reads the fd it closes). */
  private void outputClosed(int slot) {
    claimFds[slot] = -1;
    outputEnded(slot);
  }

  /**
   * On the loop thread, once no client can read the output any more ({@code claimFds[slot]} is -1):
   * closes it and counts it as ended.
   */
  private void outputEnded(int slot) {
    if (!outputOpen[slot]) {
      return;
    }
    outputOpen[slot] = false;
    loop.close(outputTokens[slot]);
    if (--openOutputs == 0) {
      onAllEnded.run();
    }
  }

  /**
   * On the loop thread: stops reading the outputs still open, unless a client holds the claim.
   *
   * @return false when a client reads them: try again after {@link #CALLER_SLICE_NANOS}
   */
  boolean cut() {
    if (!claim.tryLock()) {
      return false;
    }
    try {
      for (int slot = 0; slot < 2; slot++) {
        outputClosed(slot);
      }
    } finally {
      claim.unlock();
    }
    return true;
  }
}
