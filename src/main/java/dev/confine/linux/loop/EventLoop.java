package dev.confine.linux.loop;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.epoll_event;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One epoll loop on one platform thread for every pidfd, pipe and pty fd of the engine, so that a
 * thousand children cost no thread each.
 *
 * <p>Handlers run on the loop thread and must not block. An fd registered here belongs to the loop:
 * only the loop thread closes it ({@link #close(long)}), which rules out a handler reading an fd
 * number that another thread closed and the kernel reused. Registration is identified by a token
 * that is never reused, so an event for a closed registration is dropped.
 */
public final class EventLoop {
  private static final Logger LOG = LoggerFactory.getLogger(EventLoop.class);
  private static final int MAX_EVENTS = 256;
  private static final long WAKE_TOKEN = 0;

  /** What a registration does when its fd is ready; runs on the loop thread. */
  @FunctionalInterface
  public interface Handler {
    /**
     * Called with the epoll event mask (EPOLLIN, EPOLLOUT, EPOLLHUP, EPOLLERR ...).
     *
     * @param token the registration's token, for {@link EventLoop#close(long)}
     */
    void onEvents(long token, int events);
  }

  private record Registration(int fd, int eventMask, Handler handler, boolean late) {}

  /** A task that runs on the loop thread at a deadline unless cancelled first. */
  public static final class Timer implements Comparable<Timer> {
    private final EventLoop loop;
    private final long deadlineNanos;
    private final long order;
    private volatile Runnable task; // null once cancelled or run: what it holds can go
    private volatile boolean cancelled;

    private Timer(EventLoop loop, long deadlineNanos, long order, Runnable task) {
      this.loop = loop;
      this.deadlineNanos = deadlineNanos;
      this.order = order;
      this.task = task;
    }

    /**
     * Stops the task from running, if it has not run yet; safe from any thread. The timer leaves
     * the loop's heap at once (not at its deadline), and its task is dropped, so nothing the task
     * holds stays reachable through it.
     */
    public void cancel() {
      cancelled = true;
      task = null;
      if (loop.inLoop()) {
        loop.timers.remove(this);
      } else {
        loop.execute(() -> loop.timers.remove(this));
      }
    }

    @Override
    public int compareTo(Timer o) {
      int c = Long.compare(deadlineNanos - o.deadlineNanos, 0); // nanoTime may wrap
      return c != 0 ? c : Long.compare(order, o.order);
    }
  }

  private static volatile EventLoop shared;
  private static final MemorySegment ONE = longSegment(1);
  private static final ThreadLocal<MemorySegment> CTL_EVENT =
      ThreadLocal.withInitial(() -> epoll_event.allocate(Arena.ofAuto()));

  private final int epfd;
  private final int wakeFd;
  private final Thread thread;
  private final Map<Long, Registration> registrations = new ConcurrentHashMap<>();
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicLong nextToken = new AtomicLong(WAKE_TOKEN + 1);
  private final PriorityQueue<Timer> timers = new PriorityQueue<>(); // loop thread only
  private final MemorySegment readBuffer;
  private final ByteBuffer readBufferView;
  private final MemorySegment events;
  private final MemorySegment wakeBuffer;

  /**
   * The loop waits in Java ({@link LockSupport#park}), not in {@code epoll_wait}, while it has
   * nothing to watch, run or time: a thread blocked in a native call holds up the JVM's exit by up
   * to 300 ms (HotSpot waits for threads in native code to block before it exits), which every
   * {@code System.exit} of a JVM that ever started the loop would pay. Set by the loop before it
   * looks a last time; whoever adds work after reads it and unparks the loop.
   */
  private volatile boolean idle;

  private EventLoop() {
    int ep = Syscalls.epollCreate1(LibC.EPOLL_CLOEXEC());
    if (ep < 0) {
      throw new ErrnoException("epoll_create1", -ep);
    }
    int wake = Syscalls.eventfd(0, LibC.EFD_CLOEXEC() | LibC.EFD_NONBLOCK());
    if (wake < 0) {
      Syscalls.close(ep);
      throw new ErrnoException("eventfd", -wake);
    }
    epfd = ep;
    wakeFd = wake;
    Arena arena = Arena.ofShared(); // lives as long as the loop, which is as long as the JVM
    readBuffer = arena.allocate(64 * 1024);
    readBufferView = readBuffer.asByteBuffer();
    events = epoll_event.allocateArray(MAX_EVENTS, arena);
    wakeBuffer = arena.allocate(ValueLayout.JAVA_LONG);
    ctl(LibC.EPOLL_CTL_ADD(), wakeFd, LibC.EPOLLIN(), WAKE_TOKEN);
    thread = Thread.ofPlatform().name("confine-event-loop").daemon().unstarted(this::run);
    thread.start();
  }

  private static MemorySegment longSegment(long value) {
    MemorySegment s = Arena.global().allocate(ValueLayout.JAVA_LONG);
    s.set(ValueLayout.JAVA_LONG, 0, value);
    return s;
  }

  /** The engine's loop, started on first use. */
  public static EventLoop shared() {
    EventLoop l = shared;
    if (l == null) {
      synchronized (EventLoop.class) {
        l = shared;
        if (l == null) {
          shared = l = new EventLoop();
        }
      }
    }
    return l;
  }

  /** Whether the caller is the loop thread. */
  public boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /**
   * Watches {@code fd} for {@code eventMask}; the loop owns the fd from now on. Level-triggered.
   *
   * @return the registration's token
   */
  public long register(int fd, int eventMask, Handler handler) {
    return register(fd, eventMask, handler, false);
  }

  /**
   * As {@link #register(int, int, Handler)}; a {@code late} registration's events are handled after
   * the other events of the same wake-up. A child's exit (its pidfd) is late: its pipes' end of
   * file usually arrives in the same wake-up, and handling it first lets the waiting caller wake
   * once, not twice.
   */
  public long register(int fd, int eventMask, Handler handler, boolean late) {
    long token = nextToken.getAndIncrement();
    registrations.put(token, new Registration(fd, eventMask, handler, late));
    int r = ctl(LibC.EPOLL_CTL_ADD(), fd, eventMask, token);
    if (r < 0) {
      registrations.remove(token);
      throw new ErrnoException("epoll_ctl(ADD)", -r);
    }
    unparkIfIdle();
    return token;
  }

  /**
   * Stops watching and closes the fd of {@code token}, on the loop thread (now when called from it,
   * else as soon as the loop runs the request). Idempotent.
   */
  public void close(long token) {
    if (inLoop()) {
      Registration reg = registrations.remove(token);
      if (reg != null) {
        ctl(LibC.EPOLL_CTL_DEL(), reg.fd, 0, token);
        Syscalls.close(reg.fd);
      }
    } else {
      execute(() -> close(token));
    }
  }

  /**
   * Stops watching the fd of {@code token} without closing it, from any thread, until {@link
   * #resume}. An event the loop collected just before may still reach the handler. The caller must
   * keep the registration from being closed meanwhile (the session's output claim does).
   */
  public void suspend(long token) {
    Registration reg = registrations.get(token);
    if (reg != null) {
      ctl(LibC.EPOLL_CTL_DEL(), reg.fd, 0, token);
    }
  }

  /** Watches the fd of a {@link #suspend suspended} {@code token} again, from any thread. */
  public void resume(long token) {
    Registration reg = registrations.get(token);
    if (reg != null) {
      int r = ctl(LibC.EPOLL_CTL_ADD(), reg.fd, reg.eventMask, token);
      if (r < 0) {
        throw new ErrnoException("epoll_ctl(ADD)", -r);
      }
    }
  }

  /** Runs {@code task} on the loop thread. */
  public void execute(Runnable task) {
    tasks.add(task);
    wake();
    unparkIfIdle();
  }

  /** After work was published: wakes the loop if it waits in Java (see {@link #idle}). */
  private void unparkIfIdle() {
    if (idle) {
      LockSupport.unpark(thread);
    }
  }

  /**
   * On the loop thread, with nothing to watch, run or time: waits in Java until there is. The flag
   * is set before the last look, so work added after that look unparks the loop (or leaves it a
   * permit), and work added before it is seen.
   */
  private void parkWhileIdle() {
    while (registrations.isEmpty() && tasks.isEmpty() && timeoutMillis() < 0) {
      idle = true;
      try {
        if (registrations.isEmpty() && tasks.isEmpty() && timeoutMillis() < 0) {
          LockSupport.park(this);
        }
      } finally {
        idle = false;
      }
    }
  }

  /**
   * Runs {@code task} on the loop thread once {@link System#nanoTime()} reaches {@code
   * deadlineNanos}, unless the returned timer is cancelled first.
   */
  public Timer schedule(long deadlineNanos, Runnable task) {
    Timer t = new Timer(this, deadlineNanos, nextToken.getAndIncrement(), task);
    if (inLoop()) {
      timers.add(t);
    } else {
      execute(() -> timers.add(t));
    }
    return t;
  }

  /** The fd of a live registration; only meaningful on the loop thread, inside a handler. */
  public int fdOf(long token) {
    Registration reg = registrations.get(token);
    return reg == null ? -1 : reg.fd;
  }

  /** The number of fds the loop watches, its wake-up fd excluded. */
  public int registrationCount() {
    return registrations.size();
  }

  /** A 64 KiB buffer for reads; only for use on the loop thread, within one handler call. */
  MemorySegment readBuffer() {
    return readBuffer;
  }

  /** {@link #readBuffer()} as a buffer, for readers above the engine. */
  public ByteBuffer readBufferView() {
    return readBufferView;
  }

  private void wake() {
    // eventfd counts; one pending wake-up is enough however many tasks wait.
    Syscalls.write(wakeFd, ONE, 8);
  }

  private int ctl(int op, int fd, int eventMask, long token) {
    MemorySegment ev = CTL_EVENT.get();
    epoll_event.events(ev, eventMask);
    ev.set(ValueLayout.JAVA_LONG_UNALIGNED, epoll_event.data$offset(), token);
    return Syscalls.epollCtl(epfd, op, fd, ev);
  }

  private void run() {
    long size = epoll_event.sizeof();
    long dataOffset = epoll_event.data$offset();
    while (true) {
      parkWhileIdle();
      int n = Syscalls.epollWait(epfd, events, MAX_EVENTS, timeoutMillis());
      if (n < 0) {
        if (-n == LibC.EINTR()) {
          continue;
        }
        LOG.error("confine event loop: epoll_wait failed: {}", Syscalls.strerror(-n));
        return;
      }
      for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
          long base = i * size;
          int mask = events.get(ValueLayout.JAVA_INT_UNALIGNED, base);
          long token = events.get(ValueLayout.JAVA_LONG_UNALIGNED, base + dataOffset);
          if (token == WAKE_TOKEN) {
            if (pass == 0) {
              Syscalls.read(wakeFd, wakeBuffer, 8);
            }
            continue;
          }
          Registration reg = registrations.get(token);
          if (reg == null || reg.late != (pass == 1)) {
            continue;
          }
          try {
            reg.handler.onEvents(token, mask);
          } catch (Throwable t) {
            LOG.error("confine event loop: handler for fd {} failed", reg.fd, t);
            close(token);
          }
        }
      }
      Runnable task;
      while ((task = tasks.poll()) != null) {
        runSafely(task);
      }
      runDueTimers();
    }
  }

  private int timeoutMillis() {
    Timer next;
    while ((next = timers.peek()) != null && next.cancelled) {
      timers.poll();
    }
    if (next == null) {
      return -1;
    }
    long left = next.deadlineNanos - System.nanoTime();
    // Round up: waking a little late is harmless, waking early spins.
    return left <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000);
  }

  private void runDueTimers() {
    long now = System.nanoTime();
    Timer t;
    while ((t = timers.peek()) != null && (t.cancelled || t.deadlineNanos - now <= 0)) {
      timers.poll();
      Runnable task = t.task;
      if (!t.cancelled && task != null) {
        t.cancelled = true;
        t.task = null;
        runSafely(task);
      }
    }
  }

  private static void runSafely(Runnable task) {
    try {
      task.run();
    } catch (Throwable t) {
      LOG.error("confine event loop: task failed", t);
    }
  }
}
