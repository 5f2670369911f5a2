package dev.confine.linux.child;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.loop.CallerPoll;
import dev.confine.linux.loop.EventLoop;
import dev.confine.linux.loop.FdDriver;
import dev.confine.linux.spawn.ExitStatus;
import dev.confine.linux.spawn.Reaping;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import dev.confine.linux.tree.TreeGuard;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One spawned child whose stdout and stderr are captured and whose stdin is fed from bytes (or a
 * stream, by a {@link StdinPump}): its pidfd reports the exit (reaped with {@code
 * waitid(P_PIDFD)}), its pipes are drained as they fill. A platform-thread caller watches them
 * itself while it waits ({@link CallerPoll}); a virtual thread's child is watched by the shared
 * {@link EventLoop}. The caller blocks in {@link #awaitExit} and {@link #awaitOutputClosed} and
 * decides when to kill; this class only carries out.
 */
public final class Execution implements Captured {
  private static final long SERIAL_HAND_OVER_BYTES = 1 << 20;
  private static final ReentrantLock HAND_OVER = new ReentrantLock();

  private final FdDriver driver;
  private int pid; // -1 while a handed-off spawn is pending
  private HandOff handOff; // the caller's thread only: a handed-off spawn not adopted, or failed
  private final long startNanos;
  private final long cap;
  private final CappedBuffer stdout;
  private final CappedBuffer stderr;
  private final OutputStream stdoutSink; // streamed instead of kept when not null
  private final OutputStream stderrSink;
  private OutputPump stdoutPump; // under lock; the pumps of streamed outputs
  private OutputPump stderrPump;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();

  private ExitStatus exit;
  private String reapFailure;
  private long exitNanos;
  private int openOutputs = 2;
  private int outputWaiters; // callers in awaitOutputClosed, under lock
  private final Stream out = new Stream();
  private final Stream err = new Stream();
  private final Stream in = new Stream();
  private StdinPump pump; // under lock; null unless stdin is a stream

  /**
   * One pipe of the child on the driver. Its handler can run before {@link EventLoop#register}
   * returns the token (a child that exits at once), so streams are told apart by this object, not
   * by their token.
   */
  private static final class Stream {
    long token = -1; // -1: not registered
    boolean open = true;
  }

  private final TreeGuard guard;

  private Execution(
      FdDriver driver,
      int pid,
      long cap,
      TreeGuard guard,
      OutputStream stdoutSink,
      OutputStream stderrSink) {
    this.driver = driver;
    this.guard = guard;
    this.pid = pid;
    this.startNanos = System.nanoTime();
    this.cap = cap;
    // A streamed output's buffer is used only when its pump cannot start: bounded by the heap.
    long kept = Math.min(cap, maxOutputCap());
    this.stdout = new CappedBuffer(stdoutSink == null ? cap : kept);
    this.stderr = new CappedBuffer(stderrSink == null ? cap : kept);
    this.stdoutSink = stdoutSink;
    this.stderrSink = stderrSink;
  }

  /**
   * Spawns {@code spec} and starts watching it: on the event loop for a virtual thread; on the
   * calling platform thread, while it waits in {@link #awaitExit}, {@link #awaitOutputClosed} or
   * {@link #runToCompletion} (use {@link #startWatched} not to wait).
   *
   * @param stdin the bytes for the child's stdin when {@code spec.pipeStdin()}, else ignored
   * @param outputCap how many bytes of each output stream to keep, at most {@link #maxOutputCap()}
   * @throws ErrnoException when the spawn fails
   * @throws IllegalArgumentException when {@code outputCap} is above {@link #maxOutputCap()}
   */
  public static Execution start(SpawnSpec spec, byte[] stdin, long outputCap) {
    return start(spec, stdin, outputCap, TreeGuard.NONE);
  }

  /**
   * Spawns {@code spec} under {@code guard} (a cgroup, the sampler) and starts watching it, by the
   * {@link SpawnStrategy} this call gets. The execution owns the guard from now on and closes it
   * when {@link #runToCompletion} ends; when the spawn fails the guard is closed before the failure
   * is thrown. A handed-off spawn's failure is thrown by {@link #runToCompletion}.
   */
  public static Execution start(SpawnSpec spec, byte[] stdin, long outputCap, TreeGuard guard) {
    return start(spec, stdin, null, outputCap, guard, true, null, null);
  }

  /**
   * Starts the exec {@code spec} describes for a caller that waits for it ({@link
   * #runToCompletion}): its stdin from bytes or, when {@code spec.stdinStream()} is set, fed while
   * it runs by a {@link StdinPump}, a daemon platform thread started here, on the calling thread
   * (so it is never confined), and stopped when the exec ends ({@link #closeStreams}). The child
   * starts at once, whatever the stream does.
   */
  public static Execution start(ChildSpec spec) {
    return start(
        spec.spawn(),
        spec.stdin(),
        spec.stdinStream(),
        spec.outputCap(),
        spec.guard(),
        true,
        spec.stdoutSink(),
        spec.stderrSink());
  }

  /**
   * As {@link #start(SpawnSpec, byte[], long)}, watched by the event loop whatever the calling
   * thread: for callers that do not wait in this class while the child runs (a platform caller's
   * child is otherwise only read and reaped while its caller waits).
   */
  public static Execution startWatched(SpawnSpec spec, byte[] stdin, long outputCap) {
    return start(spec, stdin, null, outputCap, TreeGuard.NONE, false, null, null);
  }

  private static Execution start(
      SpawnSpec spec,
      byte[] stdin,
      InputStream stdinStream,
      long outputCap,
      TreeGuard guard,
      boolean callerWaits,
      OutputStream stdoutSink,
      OutputStream stderrSink) {
    boolean keeps = stdoutSink == null || stderrSink == null;
    if (outputCap < 0 || (keeps && outputCap > maxOutputCap())) {
      guard.close(); // before anything is spawned
      throw new IllegalArgumentException(
          "output cap " + outputCap + " outside 0.." + maxOutputCap() + " (see maxOutputCap)");
    }
    SpawnStrategy strategy = SpawnStrategy.of(spec, guard, callerWaits);
    FdDriver driver = strategy == SpawnStrategy.LOOP_WATCHES ? FdDriver.loop() : new CallerPoll();
    if (strategy == SpawnStrategy.HANDED_OFF) {
      HandOff handOff = HandOff.submit(spec, (TreeGuard.HandedOff) guard);
      Execution e = new Execution(driver, -1, outputCap, guard, stdoutSink, stderrSink);
      e.handOff = handOff;
      Spawner.Pipes p = handOff.pipes();
      e.watchPipes(p.stdinWrite(), p.stdoutRead(), p.stderrRead(), stdin, stdinStream);
      return e;
    }
    Spawner.Spawned s;
    try {
      s = guard.spawn(spec);
    } catch (RuntimeException e) {
      guard.close();
      throw e;
    }
    guard.started(s.pid());
    Execution e = new Execution(driver, s.pid(), outputCap, guard, stdoutSink, stderrSink);
    e.watchPipes(s.stdinFd(), s.stdoutFd(), s.stderrFd(), stdin, stdinStream);
    driver.register(s.pidfd(), LibC.EPOLLIN(), e::onExit, true);
    return e;
  }

  private void watchPipes(
      int stdinFd, int stdoutFd, int stderrFd, byte[] stdinBytes, InputStream stdinStream) {
    Syscalls.setNonBlocking(stdoutFd);
    Syscalls.setNonBlocking(stderrFd);
    OutputPump o = watchOutput(out, stdoutFd, stdout, stdoutSink);
    OutputPump e = watchOutput(err, stderrFd, stderr, stderrSink);
    lock.lock();
    try {
      stdoutPump = o;
      stderrPump = e;
    } finally {
      lock.unlock();
    }
    if (stdinFd >= 0) {
      if (stdinStream != null) {
        StdinPump p = StdinPump.start(stdinStream, stdinFd);
        lock.lock();
        try {
          pump = p;
        } finally {
          lock.unlock();
        }
      } else if (stdinBytes == null || stdinBytes.length == 0) {
        Syscalls.close(stdinFd);
      } else {
        Syscalls.setNonBlocking(stdinFd);
        register(in, stdinFd, LibC.EPOLLOUT(), writer(stdinBytes));
      }
    }
  }

  /**
   * Takes a handed-off spawn's outcome if it is there, or waits for it with {@code block}: the pid,
   * the guard told, the pidfd watched. A failed spawn's exception is thrown (and again on every
   * later call, as by {@link #runToCompletion}, which cleans up and rethrows it).
   *
   * @return whether the child is known (always true when nothing was handed off)
   */
  private boolean adopt(boolean block) {
    if (handOff == null) {
      return true;
    }
    Spawner.Spawned s = handOff.take(block);
    if (s == null) {
      return false;
    }
    handOff = null;
    pid = s.pid();
    guard.started(pid);
    driver.register(s.pidfd(), LibC.EPOLLIN(), this::onExit, true);
    return true;
  }

  /**
   * Why the stdin stream could not be read to its end (the stream's exception, or why its pump
   * could not start), or null: the child then read end of file where the input failed.
   */
  @Override
  public Throwable stdinFailure() {
    StdinPump p = stdinPump();
    return p == null ? null : p.failure();
  }

  /** How many bytes of the stdin stream reached the child's pipe (0 without a stream). */
  @Override
  public long stdinWritten() {
    StdinPump p = stdinPump();
    return p == null ? 0 : p.written();
  }

  /** The pump of a streamed stdin, or null. */
  StdinPump stdinPump() {
    lock.lock();
    try {
      return pump;
    } finally {
      lock.unlock();
    }
  }

  /** The child's pid, which is also its process group and session id. */
  public int pid() {
    adopt(true);
    return pid;
  }

  private void register(Stream stream, int fd, int events, EventLoop.Handler handler) {
    long token = driver.register(fd, events, handler, false);
    lock.lock();
    try {
      stream.token = token;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Watches one output: kept in {@code buffer} by a reader on the driver, or, with a {@code sink},
   * streamed into it by an {@link OutputPump} whose end an eventfd on the driver reports. When no
   * pump can start (no eventfd or thread), the output is kept instead: nothing is lost.
   *
   * @return the pump, or null when the output is kept
   */
  private OutputPump watchOutput(Stream stream, int fd, CappedBuffer buffer, OutputStream sink) {
    if (sink != null) {
      int done = Syscalls.eventfd(0, LibC.EFD_CLOEXEC() | LibC.EFD_NONBLOCK());
      if (done >= 0) {
        OutputPump pump;
        try {
          pump = OutputPump.start(sink, cap, fd, done);
        } catch (ErrnoException e) {
          pump = null;
          Syscalls.close(done);
        }
        if (pump != null) {
          register(stream, done, LibC.EPOLLIN(), (token, events) -> outputClosed(stream, token));
          return pump;
        }
      }
    }
    register(stream, fd, LibC.EPOLLIN(), reader(stream, buffer));
    return null;
  }

  private EventLoop.Handler reader(Stream stream, CappedBuffer sink) {
    return (token, events) -> {
      MemorySegment buf = driver.buffer();
      for (int i = 0; i < ChildLifecycle.READS_PER_EVENT; i++) {
        long n = Syscalls.read(driver.fdOf(token), buf, buf.byteSize());
        if (n > 0) {
          sink.append(buf, (int) n);
          continue;
        }
        if (n == -LibC.EAGAIN() || n == -LibC.EINTR()) {
          return;
        }
        outputClosed(stream, token); // 0 is end of file; an error ends the stream as well
        return;
      }
    };
  }

  private EventLoop.Handler writer(byte[] data) {
    int[] offset = {0};
    return (token, events) -> {
      MemorySegment buf = driver.buffer();
      while (offset[0] < data.length) {
        int chunk = (int) Math.min(buf.byteSize(), data.length - offset[0]);
        MemorySegment.copy(data, offset[0], buf, ValueLayout.JAVA_BYTE, 0, chunk);
        long n = Syscalls.write(driver.fdOf(token), buf, chunk);
        if (n == -LibC.EAGAIN() || n == -LibC.EINTR()) {
          return;
        }
        if (n < 0) {
          break; // EPIPE: the child closed its stdin, which is its right
        }
        offset[0] += (int) n;
      }
      driver.close(token);
      lock.lock();
      try {
        in.open = false;
      } finally {
        lock.unlock();
      }
    };
  }

  private void onExit(long token, int events) {
    MemorySegment siginfo = driver.siginfo();
    int r = Syscalls.waitid(LibC.P_PIDFD(), driver.fdOf(token), siginfo, LibC.WEXITED());
    ExitStatus status = null;
    String failure = null;
    if (r == 0) {
      status = Reaping.status(siginfo);
    } else if (-r == LibC.EINTR() || -r == LibC.EAGAIN()) {
      return; // level-triggered: the driver calls again
    } else {
      failure = "waitid(P_PIDFD) for pid " + pid + ": " + Syscalls.strerror(-r);
    }
    driver.close(token);
    lock.lock();
    try {
      exit = status;
      reapFailure = failure;
      exitNanos = System.nanoTime();
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private void outputClosed(Stream stream, long token) {
    driver.close(token);
    lock.lock();
    try {
      if (stream.open) {
        stream.open = false;
        // The caller waits for the exit first, then for both outputs; the exit is handled after
        // the outputs of the same wake-up (a late registration), so a child whose pipes close as
        // it exits wakes its caller once.
        if (--openOutputs == 0 && (exited() || outputWaiters > 0)) {
          changed.signalAll();
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until the child has exited and been reaped, or until {@code deadlineNanos} ({@link
   * System#nanoTime()} based; {@code Long.MAX_VALUE} = no deadline).
   *
   * @return whether the child has exited
   */
  public boolean awaitExit(long deadlineNanos) throws InterruptedException {
    lock.lock();
    try {
      while (!exited()) {
        if (!awaitUntil(deadlineNanos)) {
          return exited();
        }
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** As {@link #awaitExit}, ignoring interrupts (the caller restores its interrupt status). */
  public boolean awaitExitUninterruptibly(long deadlineNanos) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return awaitExit(deadlineNanos);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Waits until both output pipes reached end of file, or until {@code deadlineNanos}.
   *
   * @return whether both are closed
   */
  public boolean awaitOutputClosed(long deadlineNanos) throws InterruptedException {
    lock.lock();
    outputWaiters++;
    try {
      while (openOutputs > 0) {
        if (!awaitUntil(deadlineNanos)) {
          return openOutputs == 0;
        }
      }
      return true;
    } finally {
      outputWaiters--;
      lock.unlock();
    }
  }

  /** As {@link #awaitOutputClosed}, ignoring interrupts (the caller restores its status). */
  public boolean awaitOutputClosedUninterruptibly(long deadlineNanos) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return awaitOutputClosed(deadlineNanos);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private boolean awaitUntil(long deadlineNanos) throws InterruptedException {
    if (handOff != null && handOff.pending()) {
      // An output at end of file means the child exited, closed it, or never started: its outcome
      // is due. Until then the child's own events wake the caller, not the spawning thread.
      long adoptBy = handOff.adoptBy();
      boolean due = openOutputs < 2 || System.nanoTime() - adoptBy >= 0;
      if (!adopt(due) && adoptBy - deadlineNanos < 0) {
        driver.await(changed, adoptBy);
        return true; // not the caller's deadline: it re-checks
      }
    }
    return driver.await(changed, deadlineNanos);
  }

  private boolean exited() {
    return exit != null || reapFailure != null;
  }

  /**
   * Sends SIGKILL to the child's whole process group.
   *
   * @return whether any process received it (false: the group was already gone)
   */
  public boolean killGroup() {
    adopt(true);
    return ChildLifecycle.killGroup(pid);
  }

  /**
   * Stops reading the outputs that are still open (a process outside the group holds them) and
   * stops feeding stdin; what was captured stays, and its reservation in the JVM's capture budget
   * is given back.
   */
  public void closeStreams() {
    stdout.release();
    stderr.release();
    StdinPump p;
    List<OutputPump> outputs = new ArrayList<>(2);
    lock.lock();
    try {
      p = pump;
      for (OutputPump o : new OutputPump[] {stdoutPump, stderrPump}) {
        if (o != null) {
          outputs.add(o);
        }
      }
    } finally {
      lock.unlock();
    }
    if (p != null) {
      p.stop();
    }
    for (OutputPump o : outputs) {
      o.stop(); // before the driver closes the pump's eventfd below
    }
    awaitStreamed(outputs);
    List<Long> tokens = new ArrayList<>(3);
    lock.lock();
    try {
      for (Stream st : List.of(out, err, in)) {
        if (st.open && st.token >= 0) {
          tokens.add(st.token); // the driver closed the others itself
        }
        if (st.open && st != in) {
          openOutputs--;
        }
        st.open = false;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    tokens.forEach(driver::close);
  }

  /** How long the end of an exec waits for its stopped pumps to finish their last write. */
  private static final long PUMP_END_NANOS = TimeUnit.SECONDS.toNanos(1);

  /**
   * Waits (up to {@link #PUMP_END_NANOS} for all) for the stopped pumps' threads, so that what they
   * read is written before the exec returns; a write to a stream that blocks longer is left to end
   * on its own.
   */
  private static void awaitStreamed(List<OutputPump> pumps) {
    long deadline = System.nanoTime() + PUMP_END_NANOS;
    boolean interrupted = false;
    for (OutputPump o : pumps) {
      while (true) {
        try {
          o.awaitEnd(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Waits for the child the way an exec does, and leaves nothing of its process group running:
   *
   * <ul>
   *   <li>until {@code deadlineNanos} for the child to exit; then, or when the calling thread is
   *       interrupted, the group is killed and the wait continues for its exit;
   *   <li>after the exit, at most {@code drainNanos} for the output pipes to reach end of file; a
   *       background process still holding them then is killed with the rest of the group, and
   *       whatever still holds them after that (a process that left the group) is cut off;
   *   <li>a group that outlived its leader without holding the pipes is killed as well;
   *   <li>the guard kills whatever else it holds (a cgroup holds escapees from the group), then is
   *       closed.
   * </ul>
   *
   * <p>An interrupt is reported as {@link ChildOutcome.Ending#INTERRUPTED} with the thread's
   * interrupt status set again. A handed-off spawn that failed is thrown from here as {@link
   * #start} would have thrown it, its pipes closed and the guard closed.
   */
  public ChildOutcome runToCompletion(long deadlineNanos, long drainNanos) {
    try {
      return ChildLifecycle.complete(this, guard, deadlineNanos, drainNanos);
    } catch (RuntimeException e) {
      if (handOff == null || !handOff.threw(e)) {
        throw e;
      }
      closeStreams(); // the handed-off spawn failed: its pipes and guard go, the failure is thrown
      guard.close();
      throw e;
    }
  }

  /** How the child ended; null until it has been reaped. */
  public ExitStatus exitStatus() {
    lock.lock();
    try {
      return exit;
    } finally {
      lock.unlock();
    }
  }

  /** Why reaping failed (another part of the process reaped our child), or null. */
  public String reapFailure() {
    lock.lock();
    try {
      return reapFailure;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Nanoseconds from the spawn to the child's reaping, or to now while it runs: the child's own
   * time, without the drain of output that background processes hold after it exited.
   */
  @Override
  public long childNanos() {
    lock.lock();
    try {
      return (exited() ? exitNanos : System.nanoTime()) - startNanos;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The most bytes per output stream this JVM lets an exec keep: the largest Java array ({@code
   * Integer.MAX_VALUE - 8} bytes) or an eighth of the maximum heap ({@link Runtime#maxMemory()}),
   * whichever is smaller. An exec holds at most its two streams' caps while it runs (plus a chunk
   * of up to 256 KiB each) and, for a moment while the result is built from them, four (the taken
   * arrays and the result's own copies): at this limit, half the maximum heap.
   */
  public static long maxOutputCap() {
    return Math.min(Integer.MAX_VALUE - 8, Runtime.getRuntime().maxMemory() / 8);
  }

  /**
   * Runs {@code build}, which takes the output ({@link #takeStdout}, {@link #takeStderr}) and makes
   * the result from it: the copies it makes are outside the {@link CaptureBudget}, so a large
   * output (1 MiB or more) is handed over by one exec of the JVM at a time, and the heap holds the
   * copies of one large result at once. Small outputs do not wait.
   */
  public <T> T handOver(Supplier<T> build) {
    if (stdout.kept() + stderr.kept() < SERIAL_HAND_OVER_BYTES) {
      return build.get();
    }
    HAND_OVER.lock();
    try {
      return build.get();
    } finally {
      HAND_OVER.unlock();
    }
  }

  /** A copy of the stdout bytes kept so far (the child may still be writing). */
  public byte[] stdout() {
    return stdout.snapshot();
  }

  /** A copy of the stderr bytes kept so far (the child may still be writing). */
  public byte[] stderr() {
    return stderr.snapshot();
  }

  /**
   * The kept stdout bytes once the exec has ended, handed over without a second copy: nothing is
   * kept after this, and later calls return the same array, which callers must not change.
   */
  @Override
  public byte[] takeStdout() {
    return stdout.take();
  }

  /** As {@link #takeStdout()}, for stderr. */
  @Override
  public byte[] takeStderr() {
    return stderr.take();
  }

  /**
   * What the capture lost because the heap could not hold it (for example {@code "stdout: the JVM's
   * heap could hold only the first 1048576 bytes"}), or null when it lost nothing.
   */
  @Override
  public String captureFailure() {
    String out = stdout.starvation();
    String err = stderr.starvation();
    if (out == null && err == null) {
      return null;
    }
    return out == null
        ? "stderr: " + err
        : err == null ? "stdout: " + out : "stdout: " + out + "; stderr: " + err;
  }

  /** Whether stdout went past the cap. */
  @Override
  public boolean stdoutTruncated() {
    OutputPump o = pumpOf(true);
    return stdout.truncated() || (o != null && o.truncated());
  }

  /** The pump of a streamed stdout ({@code true}) or stderr, or null. */
  private OutputPump pumpOf(boolean stdoutPumps) {
    lock.lock();
    try {
      return stdoutPumps ? stdoutPump : stderrPump;
    } finally {
      lock.unlock();
    }
  }

  /** Whether stderr went past the cap. */
  @Override
  public boolean stderrTruncated() {
    OutputPump e = pumpOf(false);
    return stderr.truncated() || (e != null && e.truncated());
  }
}
