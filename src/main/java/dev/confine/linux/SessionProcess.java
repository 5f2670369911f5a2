package dev.confine.linux;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.pollfd;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A child started as a long-lived session on the {@link EventLoop}, on a pty or on pipes: its
 * output goes to a {@link Listener} as it arrives, callers write its input, and its end is reported
 * once, after the output was drained and nothing of its tree is left. No thread per session:
 * reading, reaping, the timeout and the drain deadline all run on the loop.
 *
 * <p>The loop owns the output fds and the pidfd; the session owns the input fd (the stdin pipe, or
 * a duplicate of the pty master), which callers use under {@link #inputLock} so that it is never
 * closed under a writer.
 */
public final class SessionProcess {
  /** Output stream ids passed to {@link Listener#output}. */
  public static final int STDOUT = 0;

  /** Standard error of a pipe session. */
  public static final int STDERR = 1;

  /** The terminal of a pty session. */
  public static final int TTY = 2;

  private static final int WRITE_POLL_MILLIS = 50;
  // How long a client waiting in a read polls the outputs itself before it waits for the loop.
  private static final int CALLER_SLICE_MILLIS = 10;
  private static final long CALLER_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(CALLER_SLICE_MILLIS);
  // While a client keeps reading, the loop's check whether it stopped backs off from one slice to
  // this: each check wakes the loop, a third busy thread on two CPUs.
  private static final long RECLAIM_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(80);
  private static final long RECLAIM_CONFIRM_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final int QUIET_SKIP_MAX = 32;

  /** A non-blocking read of an output. */
  @FunctionalInterface
  public interface Source {
    /**
     * Reads what is waiting into {@code into}, from index 0 and at most its capacity (its position
     * and limit are left alone), without waiting.
     *
     * @return the number of bytes read, 0 at end of file, or -errno
     */
    long read(ByteBuffer into);
  }

  /**
   * What a session reports; called on the loop thread or a reading client, so it must not block.
   */
  public interface Listener {
    /**
     * The child may have written on {@code stream}: read {@code source} into {@code buffer} (the
     * reading thread's, reused) up to {@code maxReads} times, stopping at the first read that fills
     * less than the buffer, and keep what each read gave as one chunk, in order.
     *
     * @return the number of bytes read
     */
    long output(int stream, Source source, ByteBuffer buffer, int maxReads);

    /** The session ended; called once, after the last {@link #output}. */
    void ended(End end);
  }

  /**
   * How a session ended.
   *
   * @param exit the child's exit, or null when it could not be reaped ({@code reapFailure})
   * @param reapFailure why the child could not be reaped, or null
   * @param timedOut whether the timeout killed the tree
   * @param exceeded the cap that was exceeded ("memory", "cpu"), or null
   * @param unenforceable why the caps stopped being enforceable, or null
   * @param usage what the tree consumed, as far as the guard measured
   * @param leftoversKilled whether processes outlived the child and were killed
   */
  public record End(
      ExitStatus exit,
      String reapFailure,
      boolean timedOut,
      String exceeded,
      Throwable unenforceable,
      TreeUsage usage,
      boolean leftoversKilled) {}

  private final EventLoop loop;
  private final int pid;
  private final boolean tty;
  private final TreeGuard guard;
  private final Listener listener;
  private final long drainNanos;
  private final ReentrantLock inputLock = new ReentrantLock();
  private int inputFd; // under inputLock; -1 once closed

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition endedCondition = lock.newCondition();
  private End end; // under lock

  // Loop thread only.
  private int openOutputs;
  private ExitStatus exit;
  private String reapFailure;
  private boolean reaped;
  private boolean timedOut;
  private boolean finished;
  private EventLoop.Timer timeoutTimer;
  private EventLoop.Timer drainTimer;
  private final long[] outputTokens = {-1, -1}; // set once, under claim, before outputsWatched
  private final boolean[] outputOpen = {false, false};

  // Who reads the outputs: the loop's handlers, or a platform thread waiting in a read of the
  // session (readOnCaller), one at a time. Output fds are closed only under it, so a client never
  // reads a closed (or reused) fd. Lock order: claim, then the listener's locks.
  private final ReentrantLock claim = new ReentrantLock();
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

  private SessionProcess(
      EventLoop loop,
      int pid,
      boolean tty,
      int inputFd,
      TreeGuard guard,
      Listener listener,
      long drainNanos) {
    this.loop = loop;
    this.pid = pid;
    this.tty = tty;
    this.inputFd = inputFd;
    this.guard = guard;
    this.listener = listener;
    this.drainNanos = drainNanos;
  }

  /**
   * Spawns {@code spec} under {@code guard} on a new pty of {@code rows} x {@code cols} (when
   * {@code tty}) or on pipes, and starts watching it. The session owns the guard from now on; when
   * the spawn fails the guard is closed before the failure is thrown.
   *
   * @param timeoutNanos how long the child may run before its tree is killed; 0 = no limit
   * @param drainNanos how long output may keep flowing after the child exits
   * @throws ErrnoException when the pty or the spawn fails
   */
  public static SessionProcess start(
      SpawnSpec spec,
      boolean tty,
      int rows,
      int cols,
      TreeGuard guard,
      long timeoutNanos,
      long drainNanos,
      Listener listener) {
    EventLoop loop = EventLoop.shared();
    Pty.Opened pty = null;
    Spawner.Spawned s;
    int input;
    try {
      if (tty) {
        pty = Pty.open(rows, cols);
        spec = spec.withStdio(false, pty.slavePath());
      } else {
        spec = spec.withStdio(true, null);
      }
      s = guard.spawn(spec);
      if (tty) {
        input = Syscalls.fcntl(pty.master(), LibC.F_DUPFD_CLOEXEC(), 0);
        if (input < 0) {
          Syscalls.kill(-s.pid(), LibC.SIGKILL());
          try (Arena arena = Arena.ofConfined()) {
            // Reaped here, not left a zombie: nothing else knows this child.
            Syscalls.waitid(
                LibC.P_PIDFD(),
                s.pidfd(),
                arena.allocate(Reaping.SIGINFO.byteSize()),
                LibC.WEXITED());
          }
          Syscalls.close(s.pidfd());
          throw new ErrnoException("fcntl(F_DUPFD_CLOEXEC)", -input);
        }
      } else {
        input = s.stdinFd();
      }
    } catch (RuntimeException e) {
      if (pty != null) {
        Syscalls.close(pty.master());
      }
      guard.close();
      throw e;
    }
    guard.started(s.pid());
    SessionProcess p = new SessionProcess(loop, s.pid(), tty, input, guard, listener, drainNanos);
    Syscalls.setNonBlocking(input); // the pty duplicate shares the master's flags anyway
    if (tty) {
      p.watchOutputs(new int[] {TTY}, new int[] {pty.master()});
    } else {
      p.watchOutputs(new int[] {STDOUT, STDERR}, new int[] {s.stdoutFd(), s.stderrFd()});
    }
    long deadline = timeoutNanos > 0 ? System.nanoTime() + timeoutNanos : 0;
    int pidfd = s.pidfd();
    loop.execute(
        () -> {
          if (timeoutNanos > 0 && !p.finished) {
            p.timeoutTimer = loop.schedule(deadline, p::onTimeout);
          }
          loop.register(pidfd, LibC.EPOLLIN(), p::onExit, true);
        });
    return p;
  }

  private void watchOutputs(int[] streams, int[] fds) {
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

  /** The child's pid, which is also its process group and session id. */
  public int pid() {
    return pid;
  }

  /** Whether the child runs on a pty. */
  public boolean tty() {
    return tty;
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
   * its bound, is mostly out of the cache. Measured with 64 MiB logs, reading straight into the log
   * made the pipe's writer wait on that lock (the child's system time per 256 MiB 196-223 ms
   * against 132-150) and the session stream at ~0.7x of this.
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
   * @return {@link CallerRead#SOME} when output (or an output's end) was taken in, or the thread is
   *     interrupted: the caller re-checks; {@link CallerRead#BUSY} when the loop or another client
   *     holds the outputs; {@link CallerRead#NONE} when a virtual thread calls, none is left for a
   *     client, or nothing came within the slice: the caller waits for the loop as before
   */
  public CallerRead readOnCaller(long deadlineNanos) {
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
      // chunk, a tenth of a reading client's time when tried every fourth chunk. A poll finds it
      // whenever the streaming one is quiet, and it is read every time again once it gave some.
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

  /** What {@link #readOnCaller(long)} found. */
  public enum CallerRead {
    /** Output, or an output's end, was taken in, or the thread is interrupted: look again. */
    SOME,
    /** The loop or another client holds the outputs, perhaps only for a moment: try again soon. */
    BUSY,
    /**
     * Nothing came within the slice, or the outputs are not a client's to read: wait for the loop.
     */
    NONE
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
    if (--openOutputs == 0 && reaped) {
      finish();
    }
  }

  private void onExit(long token, int events) {
    int r = Syscalls.waitid(LibC.P_PIDFD(), loop.fdOf(token), Reaping.SIGINFO, LibC.WEXITED());
    if (r == 0) {
      exit = Reaping.status();
    } else if (-r == LibC.EINTR() || -r == LibC.EAGAIN()) {
      return; // level-triggered: the loop calls again
    } else {
      reapFailure = "waitid(P_PIDFD) for pid " + pid + ": " + Syscalls.strerror(-r);
    }
    loop.close(token);
    reaped = true;
    if (openOutputs == 0) {
      finish();
    } else {
      drainTimer = loop.schedule(System.nanoTime() + drainNanos, this::onDrainExpired);
    }
  }

  private void onTimeout() {
    if (!finished) {
      timedOut = true;
      killTree();
    }
  }

  private void onDrainExpired() {
    if (finished) {
      return;
    }
    // A background process still holds the output: kill what can be killed, then stop reading.
    killTree();
    drainTimer =
        loop.schedule(System.nanoTime() + ChildLifecycle.SETTLE_AFTER_KILL_NANOS, this::cutOutputs);
  }

  /** Stops reading the outputs still open; after a client's slice when one is reading them. */
  private void cutOutputs() {
    if (finished) {
      return;
    }
    if (!claim.tryLock()) {
      drainTimer = loop.schedule(System.nanoTime() + CALLER_SLICE_NANOS, this::cutOutputs);
      return;
    }
    try {
      for (int slot = 0; slot < 2; slot++) {
        outputClosed(slot);
      }
    } finally {
      claim.unlock();
    }
  }

  private void finish() {
    if (finished) {
      return;
    }
    finished = true;
    if (timeoutTimer != null) {
      timeoutTimer.cancel();
    }
    if (drainTimer != null) {
      drainTimer.cancel();
    }
    boolean leftovers = ChildLifecycle.killLeftovers(guard, this::killGroup);
    guard.close();
    End e =
        new End(
            exit,
            reapFailure,
            timedOut,
            guard.exceeded(),
            guard.unenforceable(),
            guard.usage(),
            leftovers);
    try {
      listener.ended(e);
    } finally {
      lock.lock();
      try {
        end = e;
        endedCondition.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  /** Sends SIGTERM to the child's process group; false when the group is gone. */
  public boolean terminateGroup() {
    return Syscalls.kill(-pid, LibC.SIGTERM()) == 0;
  }

  /** Sends SIGINT to the child's process group; false when the group is gone. */
  public boolean interruptGroup() {
    return Syscalls.kill(-pid, LibC.SIGINT()) == 0;
  }

  /** Kills the child's process group and whatever else the guard holds. */
  public void killTree() {
    ChildLifecycle.killTree(guard, this::killGroup);
  }

  private boolean killGroup() {
    return ChildLifecycle.killGroup(pid);
  }

  /**
   * Writes all of {@code data} to the child's input, waiting while the pipe or terminal is full.
   *
   * @throws ErrnoException when the input is closed or the write fails (EPIPE: the child stopped
   *     reading; EIO: the terminal is gone)
   */
  public void write(byte[] data) throws InterruptedException {
    inputLock.lockInterruptibly();
    try (Arena arena = Arena.ofConfined()) {
      if (inputFd < 0) {
        throw new ErrnoException("write", LibC.EPIPE());
      }
      MemorySegment buf = arena.allocate(Math.min(data.length, 64 * 1024));
      MemorySegment pfd = pollfd.allocate(arena);
      int offset = 0;
      while (offset < data.length) {
        int chunk = (int) Math.min(buf.byteSize(), data.length - offset);
        MemorySegment.copy(data, offset, buf, ValueLayout.JAVA_BYTE, 0, chunk);
        long n = Syscalls.write(inputFd, buf, chunk);
        if (n > 0) {
          offset += (int) n;
        } else if (n == -LibC.EAGAIN()) {
          awaitWritable(pfd);
        } else if (n != -LibC.EINTR()) {
          throw new ErrnoException("write", (int) -n);
        }
      }
    } finally {
      inputLock.unlock();
    }
  }

  private void awaitWritable(MemorySegment pfd) throws InterruptedException {
    // Polled in slices so that an interrupt is noticed; the loop is not involved in writing.
    pollfd.fd(pfd, inputFd);
    pollfd.events(pfd, (short) LibC.POLLOUT());
    while (true) {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      int r = Syscalls.poll(pfd, 1, WRITE_POLL_MILLIS);
      if (r > 0) {
        return; // writable, or an error the next write reports
      }
    }
  }

  /** Closes the child's input (a pipe session's stdin); later writes fail with EPIPE. */
  public void closeInput() {
    inputLock.lock();
    try {
      if (inputFd >= 0) {
        Syscalls.close(inputFd);
        inputFd = -1;
      }
    } finally {
      inputLock.unlock();
    }
  }

  /**
   * Sets the pty's window size.
   *
   * @throws ErrnoException when the session has no terminal any more or the ioctl fails
   */
  public void resize(int rows, int cols) {
    inputLock.lock();
    try {
      if (inputFd < 0) {
        throw new ErrnoException("ioctl(TIOCSWINSZ)", LibC.EIO());
      }
      Pty.setSize(inputFd, rows, cols);
    } finally {
      inputLock.unlock();
    }
  }

  /** The terminal's current interrupt character (Ctrl-C unless the child changed it). */
  public byte interruptChar() {
    inputLock.lock();
    try {
      return inputFd < 0 ? 0x03 : Pty.interruptChar(inputFd);
    } finally {
      inputLock.unlock();
    }
  }

  /** The terminal's current end-of-file character (Ctrl-D unless the child changed it). */
  public byte eofChar() {
    inputLock.lock();
    try {
      return inputFd < 0 ? 0x04 : Pty.eofChar(inputFd);
    } finally {
      inputLock.unlock();
    }
  }

  /**
   * Waits until the session has ended, or until {@code deadlineNanos} ({@code Long.MAX_VALUE} = no
   * deadline).
   *
   * @return how it ended, or null when it is still running at the deadline
   */
  public End awaitEnd(long deadlineNanos) throws InterruptedException {
    lock.lock();
    try {
      while (end == null) {
        if (deadlineNanos == Long.MAX_VALUE) {
          endedCondition.await();
        } else {
          long left = deadlineNanos - System.nanoTime();
          if (left <= 0) {
            return null;
          }
          endedCondition.await(left, TimeUnit.NANOSECONDS);
        }
      }
      return end;
    } finally {
      lock.unlock();
    }
  }

  /** How the session ended, or null while it runs. */
  public End end() {
    lock.lock();
    try {
      return end;
    } finally {
      lock.unlock();
    }
  }
}
