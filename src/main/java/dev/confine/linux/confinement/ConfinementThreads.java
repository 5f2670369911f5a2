package dev.confine.linux.confinement;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.loop.EventLoop;
import dev.confine.linux.proc.ProcCapsWatcher;
import dev.confine.linux.spawn.PendingSpawn;
import dev.confine.linux.spawn.PlacementThread;
import dev.confine.linux.spawn.SpawnPlacement;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.EngineException;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import dev.confine.linux.tree.Cap;
import dev.confine.linux.tree.CapWatch;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.linux.tree.TreeUsage;
import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The confinement threads: one dedicated platform daemon thread per distinct {@link Confinement},
 * created from an unconfined caller thread, that first confines ITSELF (as root, network and mount
 * namespaces; then no capabilities and, when asked, another user; no_new_privs, Landlock, seccomp;
 * all per thread and inherited by what the thread spawns) and then only runs spawn requests handed
 * over by callers, taking the steps that place each child in its tree's cgroups. At most {@link
 * #MAX_LIVE} live; the least recently used retires when another is needed. A session's pty spawn
 * gets a thread of its own, whose bounds name that pty, and which ends after it.
 *
 * <p>Hazard this class exists for: a thread created by a confined thread inherits its confinement.
 * So a confinement thread never starts threads and never touches lazily started pools or engine
 * threads (ForkJoinPool, CompletableFuture's async methods, virtual threads, HttpClient, logging):
 * requests and results travel through plain lock/condition holders, and {@link
 * #startEngineThreads()} starts every lazily started engine thread from an unconfined thread before
 * the first confinement thread exists.
 */
public final class ConfinementThreads {
  /** How many confinement threads may be live at once. */
  public static final int MAX_LIVE = 8;

  /** The thread name prefix, for tests and thread dumps. */
  public static final String NAME_PREFIX = "confine-confinement-";

  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static final Object POOL = new Object();
  private static final LinkedHashMap<Confinement, Worker> LIVE =
      new LinkedHashMap<>(16, 0.75f, true); // access order: the eldest is the least recently used
  private static volatile boolean engineStarted;

  private ConfinementThreads() {}

  /** How a confinement isolates the network. */
  public enum Network {
    /** The host's network. */
    HOST,
    /** The seccomp filter refuses every socket family but AF_UNIX, and io_uring (rootless). */
    SECCOMP,
    /**
     * A private network namespace with only loopback, up (root); the seccomp filter keeps AF_UNIX,
     * AF_INET, AF_INET6 and NETLINK_ROUTE and refuses every other family, and io_uring.
     */
    NAMESPACE,
    /**
     * The host's network, TCP alone, every connect decided by the {@link ConnectSupervisor} with
     * the confinement's {@link ConnectGate} (rootless ALLOW_LIST and PROXY): the seccomp filter
     * keeps AF_UNIX and TCP on AF_INET and AF_INET6, hands every connect to the supervisor and
     * refuses io_uring and TCP fast open; the Landlock domain refuses every TCP bind and connect of
     * the children's own (ABI 4), so that only the supervisor's connects on their behalf get out.
     */
    SUPERVISED
  }

  /**
   * A confinement: writes allowed only beneath {@code writable} (sorted, distinct absolute paths
   * without symbolic links), how the network is isolated, whether every other mount is read-only in
   * a private mount namespace (root), the user the children run as (null: this JVM's), the session
   * pty the children may use (null: none; see {@link #spawn}), with {@link Network#NAMESPACE} the
   * namespace to join (null: a new one for the thread), and with {@link Network#SUPERVISED} the
   * gate of the children's connects and, optionally, a namespace to join (as root: the supervisor
   * then connects their sockets inside it). {@link Network#SECCOMP} and {@link Network#NAMESPACE}
   * take a gate too, optionally: their connects then wait for the supervisor as well (which keeps
   * the host's unix sockets out of reach; without a gate any the children can open is theirs).
   */
  public record Confinement(
      List<String> writable,
      Network network,
      boolean readOnlyHost,
      Credentials.User user,
      String terminal,
      NetworkNamespace namespace,
      ConnectGate gate) {
    /** Sorts and de-duplicates the paths. */
    public Confinement {
      writable = List.copyOf(new TreeSet<>(writable));
      Objects.requireNonNull(network, "network");
      if (namespace != null && network != Network.NAMESPACE && network != Network.SUPERVISED) {
        throw new IllegalArgumentException(
            "a namespace to join needs Network.NAMESPACE or Network.SUPERVISED");
      }
      if (gate == null ? network == Network.SUPERVISED : network == Network.HOST) {
        throw new IllegalArgumentException(
            "Network.SUPERVISED needs a gate, and Network.HOST takes none");
      }
    }

    /** A confinement as this JVM's user, with no pty, in a new namespace with NAMESPACE. */
    public Confinement(List<String> writable, Network network, boolean readOnlyHost) {
      this(writable, network, readOnlyHost, null, null, null, null);
    }

    /** This confinement with {@code terminal} as its children's pty. */
    Confinement withTerminal(String terminal) {
      return new Confinement(writable, network, readOnlyHost, user, terminal, namespace, gate);
    }
  }

  /**
   * Starts, from the calling thread, every engine thread that would otherwise start lazily: the
   * event loop, the cap watcher, the /proc caps sampler, the cgroup placement thread, the common
   * Cleaner behind automatic arenas, and the namespace probe's throwaway thread. Must run on an
   * unconfined thread before the first confinement thread exists, so none of them can ever be
   * created by (and inherit the confinement of) a confinement thread. Idempotent.
   */
  public static void startEngineThreads() {
    if (engineStarted) {
      return;
    }
    synchronized (POOL) {
      if (engineStarted) {
        return;
      }
      if (isConfinementThread()) {
        throw new IllegalStateException("engine threads must start from an unconfined thread");
      }
      EventLoop.shared();
      ProcCapsWatcher.startSharedThread();
      try {
        for (Class<?> c :
            List.of(CapWatch.class, PlacementThread.class, Landlock.class, SeccompFilter.class)) {
          Class.forName(c.getName(), true, c.getClassLoader());
        }
        ThreadNamespaces.networkAvailability(); // its probe starts a thread
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException(e);
      }
      Arena.ofAuto().allocate(1); // the common Cleaner thread
      Syscalls.gettid();
      engineStarted = true;
    }
  }

  /** Whether the calling thread is a confinement thread. */
  static boolean isConfinementThread() {
    return Thread.currentThread().getName().startsWith(NAME_PREFIX)
        && Thread.currentThread().isDaemon();
  }

  /**
   * Retires the confinement thread of {@code confinement}, if one is live: it ends once its queued
   * spawns are done (for a confinement that will not be used again, such as one whose namespace is
   * released). A later spawn under it makes a new thread.
   */
  public static void retire(Confinement confinement) {
    synchronized (POOL) {
      Worker w = LIVE.remove(confinement);
      if (w != null) {
        w.retire();
      }
    }
  }

  /** How many confinement threads are live (for tests). */
  public static int live() {
    synchronized (POOL) {
      return LIVE.size();
    }
  }

  /**
   * Spawns {@code spec} on the confinement thread of {@code confinement}, creating that thread (and
   * retiring the least recently used one past {@link #MAX_LIVE}) when needed. Waits for the spawn
   * without giving up on interrupt (an abandoned spawn would leak a child); the interrupt status is
   * kept.
   *
   * @throws ConfinementException when the confinement cannot be applied on this host
   * @throws ErrnoException when the spawn itself fails
   */
  public static Spawner.Spawned spawn(Confinement confinement, SpawnSpec spec) {
    return spawn(confinement, spec, SpawnPlacement.NONE);
  }

  /**
   * As {@link #spawn(Confinement, SpawnSpec)}, the confinement thread placing the child with {@code
   * placement}'s steps around the spawn; releasing and adopting are the caller's.
   */
  static Spawner.Spawned spawn(Confinement confinement, SpawnSpec spec, SpawnPlacement placement) {
    if (spec.terminal() != null && !spec.terminal().equals(confinement.terminal())) {
      // The session's own pty is the one terminal its children may open: a thread of its own,
      // confined with that pty in its bounds, spawns it and ends.
      if (confinement.user() != null) {
        int r = Syscalls.lchown(spec.terminal(), confinement.user().uid(), -1);
        if (r < 0) {
          throw new ErrnoException("chown " + spec.terminal(), -r);
        }
      }
      return submit(confinement.withTerminal(spec.terminal()), spec, null, placement).await();
    }
    return submit(confinement, spec, null, placement).await();
  }

  /**
   * A guard that spawns under {@code confinement} and holds the tree with {@code tree} (a cgroup,
   * the sampler, or {@link TreeGuard#NONE}): the confinement thread takes the tree's placement
   * steps around the spawn ({@link TreeGuard#placement}), the caller the rest. An {@code Execution}
   * of a platform thread hands its spawn over without waiting for it ({@link TreeGuard.HandedOff})
   * unless the child must be moved under a cap right after its spawn; everything else spawns as
   * {@link #spawn} does. The guard owns {@code tree}.
   *
   * @throws EngineException when the tree's placement cannot be prepared ({@code tree} is closed)
   */
  public static TreeGuard guard(Confinement confinement, TreeGuard tree) {
    Objects.requireNonNull(confinement, "confinement");
    SpawnPlacement placement;
    try {
      placement = tree.placement();
    } catch (RuntimeException e) {
      tree.close();
      throw e;
    }
    return placement.adoptsAtOnce()
        ? new Placed(confinement, tree, placement)
        : new HandedOffPlaced(confinement, tree, placement);
  }

  /** A tree guard whose spawns run on a confinement thread. */
  private static class Placed implements TreeGuard {
    final Confinement confinement;
    final TreeGuard tree;
    final SpawnPlacement placement;

    Placed(Confinement confinement, TreeGuard tree, SpawnPlacement placement) {
      this.confinement = confinement;
      this.tree = tree;
      this.placement = placement;
    }

    @Override
    public Spawner.Spawned spawn(SpawnSpec spec) {
      Spawner.Spawned s;
      try {
        s = ConfinementThreads.spawn(confinement, spec, placement);
      } finally {
        placement.release();
      }
      placement.adopt(s);
      return s;
    }

    @Override
    public SpawnPlacement placement() {
      return placement;
    }

    @Override
    public void started(int pid) {
      tree.started(pid);
    }

    @Override
    public void killTree() {
      tree.killTree();
    }

    @Override
    public boolean hasProcesses() {
      return tree.hasProcesses();
    }

    @Override
    public Cap exceeded() {
      return tree.exceeded();
    }

    @Override
    public Throwable unenforceable() {
      return tree.unenforceable();
    }

    @Override
    public boolean holdsEveryProcess() {
      return tree.holdsEveryProcess();
    }

    @Override
    public TreeUsage usage() {
      return tree.usage();
    }

    @Override
    public void close() {
      placement.release(); // a spawn that never happened
      tree.close();
    }
  }

  /**
   * A tree guard whose placement needs nothing of the caller once the child exists, so that the
   * caller can pick the child up when it next wakes.
   */
  private static final class HandedOffPlaced extends Placed implements TreeGuard.HandedOff {
    HandedOffPlaced(Confinement confinement, TreeGuard tree, SpawnPlacement placement) {
      super(confinement, tree, placement);
    }

    @Override
    public PendingSpawn submit(SpawnSpec spec, Spawner.Pipes pipes) {
      PendingSpawn pending =
          ConfinementThreads.submit(confinement, spec, Objects.requireNonNull(pipes), placement);
      return new PendingSpawn() {
        @Override
        public Spawner.Spawned poll() {
          return picked(pending::poll);
        }

        @Override
        public Spawner.Spawned await() {
          return picked(pending::await);
        }

        private Spawner.Spawned picked(java.util.function.Supplier<Spawner.Spawned> outcome) {
          Spawner.Spawned s;
          try {
            s = outcome.get();
          } catch (RuntimeException | Error e) {
            placement.release();
            throw e;
          }
          if (s != null) {
            placement.release();
            placement.adopt(s); // nothing to move: it cannot fail
          }
          return s;
        }
      };
    }
  }

  /**
   * Queues {@code spec} for the confinement thread of {@code confinement} and returns at once. With
   * {@code pipes} the child gets them as its stdio and their child ends are closed once the spawn
   * is over, succeeded or not (so a caller sleeping on the parent ends wakes on a failure); the
   * parent ends stay the caller's. The thread takes {@code placement}'s steps around the spawn. The
   * thread finishing the spawn wakes nobody unless a caller already waits in {@link
   * PendingSpawn#await}.
   */
  static PendingSpawn submit(
      Confinement confinement, SpawnSpec spec, Spawner.Pipes pipes, SpawnPlacement placement) {
    startEngineThreads();
    Request r = new Request(spec, pipes, placement);
    while (true) {
      Worker w = worker(confinement);
      r.worker = w;
      if (w.submit(r)) {
        return r;
      }
      // retired in between: take (or make) the current one
    }
  }

  private static Worker worker(Confinement confinement) {
    if (confinement.terminal() != null) {
      if (isConfinementThread()) {
        throw new IllegalStateException("a confinement thread must not create threads");
      }
      Worker once = new Worker(confinement, true); // not pooled: no other spawn has this pty
      once.thread.start();
      return once;
    }
    synchronized (POOL) {
      Worker w = LIVE.get(confinement);
      if (w != null && !w.hasEnded()) {
        return w;
      }
      if (w != null) {
        LIVE.remove(confinement);
      }
      List<Worker> retired = new ArrayList<>();
      Iterator<Map.Entry<Confinement, Worker>> it = LIVE.entrySet().iterator();
      while (LIVE.size() >= MAX_LIVE && it.hasNext()) {
        Worker eldest = it.next().getValue();
        it.remove();
        eldest.retire();
        retired.add(eldest);
      }
      for (Worker old : retired) {
        old.join(); // keeps the bound strict: it ends once its queued spawns are done
      }
      if (isConfinementThread()) {
        throw new IllegalStateException("a confinement thread must not create threads");
      }
      w = new Worker(confinement, false);
      LIVE.put(confinement, w);
      w.thread.start();
      return w;
    }
  }

  /** One spawn handed to a confinement thread, and its outcome. */
  private static final class Request implements PendingSpawn {
    private final SpawnSpec spec;
    private final Spawner.Pipes pipes; // null: Spawner makes them
    private final SpawnPlacement placement;
    private volatile Worker worker;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition done = lock.newCondition();
    private volatile boolean finished; // written under lock, read without it by poll
    private Spawner.Spawned result;
    private Throwable failure;

    Request(SpawnSpec spec, Spawner.Pipes pipes, SpawnPlacement placement) {
      this.spec = spec;
      this.pipes = pipes;
      this.placement = placement;
    }

    /**
     * On the confinement thread; false when the thread is left in a child's cgroup and must spawn
     * nothing more.
     */
    boolean run() {
      Spawner.Spawned s = null;
      Throwable f = null;
      boolean usable = true;
      try {
        s = SpawnPlacement.spawnHere(placement, spec, pipes);
      } catch (IllegalStateException stuck) {
        // The caller learns why its spawn failed, when it did; the thread retires either way.
        Throwable[] spawnFailure = stuck.getSuppressed();
        f = spawnFailure.length > 0 ? spawnFailure[0] : stuck;
        usable = false;
      } catch (Throwable t) {
        f = t;
      }
      finish(s, f);
      return usable;
    }

    /** Fails a request that never ran: its child's pipe ends are closed as a spawn would. */
    void fail(ConfinementException f) {
      if (pipes != null) {
        pipes.closeChildEnds();
      }
      finish(null, f);
    }

    private void finish(Spawner.Spawned s, Throwable f) {
      lock.lock();
      try {
        result = s;
        failure = f;
        finished = true;
        done.signalAll(); // wakes nobody unless a caller already waits
      } finally {
        lock.unlock();
      }
    }

    @Override
    public Spawner.Spawned poll() {
      return finished ? outcome() : null;
    }

    @Override
    public Spawner.Spawned await() {
      if (!finished) {
        lock.lock();
        try {
          while (!finished) {
            done.awaitUninterruptibly();
          }
        } finally {
          lock.unlock();
        }
      }
      return outcome();
    }

    private Spawner.Spawned outcome() {
      if (failure == null) {
        return result;
      }
      if (failure instanceof ConfinementException) {
        synchronized (POOL) {
          LIVE.remove(worker.confinement, worker); // the next spawn tries a new thread
        }
      }
      if (failure instanceof RuntimeException re) {
        throw re;
      }
      if (failure instanceof Error e) {
        throw e;
      }
      throw new IllegalStateException(failure);
    }
  }

  /** A confinement thread: confines itself, then serves spawn requests until retired. */
  private static final class Worker implements Runnable {
    private final Confinement confinement;
    private final boolean once; // ends after its first request
    private final Thread thread;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<Request> queue = new ArrayDeque<>();
    private boolean retired;
    private boolean ended;
    private ConfinementException failure;

    Worker(Confinement confinement, boolean once) {
      this.confinement = confinement;
      this.once = once;
      this.thread =
          Thread.ofPlatform()
              .name(NAME_PREFIX + COUNTER.incrementAndGet())
              .daemon()
              .inheritInheritableThreadLocals(false)
              .unstarted(this);
    }

    /** Queues {@code r}; false when this thread no longer takes requests. */
    boolean submit(Request r) {
      lock.lock();
      try {
        if (failure != null) {
          r.fail(failure);
          return true;
        }
        if (retired || ended) {
          return false;
        }
        queue.add(r);
        changed.signalAll();
        return true;
      } finally {
        lock.unlock();
      }
    }

    boolean hasEnded() {
      lock.lock();
      try {
        return ended && failure == null;
      } finally {
        lock.unlock();
      }
    }

    void retire() {
      lock.lock();
      try {
        retired = true;
        changed.signalAll();
      } finally {
        lock.unlock();
      }
    }

    void join() {
      boolean interrupted = false;
      while (thread.isAlive()) {
        try {
          thread.join();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public void run() {
      ConfinementException f = null;
      try {
        apply(confinement);
      } catch (ConfinementException e) {
        f = e;
      } catch (Throwable t) {
        f = new ConfinementException("thread", String.valueOf(t), 0);
      }
      if (f != null) {
        lock.lock();
        try {
          failure = f;
          ended = true;
          for (Request r : queue) {
            r.fail(f);
          }
          queue.clear();
        } finally {
          lock.unlock();
        }
        return;
      }
      Request r;
      while ((r = next()) != null) {
        if (!r.run()) {
          // Left in a tree's cgroup: every later spawn would land there. A new thread takes over
          // from the next request on; the ones queued here fail.
          synchronized (POOL) {
            LIVE.remove(confinement, this);
          }
          ConfinementException stuck =
              new ConfinementException(
                  "thread", "left in a child's cgroup (moving back failed)", 0);
          lock.lock();
          try {
            retired = true;
            ended = true;
            for (Request q : queue) {
              q.fail(stuck);
            }
            queue.clear();
          } finally {
            lock.unlock();
          }
          return;
        }
      }
    }

    /** The next request, waiting for it; null once retired with nothing queued. */
    private Request next() {
      lock.lock();
      try {
        while (queue.isEmpty() && !retired) {
          changed.awaitUninterruptibly();
        }
        Request r = queue.poll();
        retired |= once;
        ended = r == null;
        return r;
      } finally {
        lock.unlock();
      }
    }

    /**
     * Confines the calling thread, in this order: namespaces (as root, a given network namespace
     * joined or a new one entered: a Landlock domain forbids mounting, and bringing loopback up
     * needs an AF_INET socket and CAP_NET_ADMIN); the Landlock ruleset, built while the thread can
     * still open every path; every capability dropped and, when asked, the user switched;
     * no_new_privs; the ruleset enforced; the seccomp filter.
     */
    private static void apply(Confinement c) {
      ConnectSupervisor supervisor = null;
      if (c.gate() != null) {
        supervisor = ConnectSupervisor.running();
        if (supervisor == null) {
          throw new ConfinementException("supervisor", "the connect supervisor is not running", 0);
        }
      }
      if (c.namespace() != null) {
        c.namespace().join();
      }
      boolean netns = c.network() == Network.NAMESPACE && c.namespace() == null;
      if (netns || c.readOnlyHost()) {
        List<String> bound = new ArrayList<>(c.writable());
        if (c.terminal() != null) {
          bound.add(c.terminal());
        }
        ThreadNamespaces.enter(netns, c.readOnlyHost(), bound);
      }
      int ruleset = Landlock.prepare(c.writable(), c.terminal(), c.network() == Network.SUPERVISED);
      try {
        Credentials.dropAll(c.user());
        int r = Syscalls.prctl(LibC.PR_SET_NO_NEW_PRIVS(), 1L);
        if (r < 0) {
          throw new ConfinementException("no_new_privs", "prctl(PR_SET_NO_NEW_PRIVS)", -r);
        }
      } catch (RuntimeException e) {
        Syscalls.close(ruleset);
        throw e;
      }
      Landlock.restrictSelf(ruleset);
      int listener = SeccompFilter.installOnThisThread(c.network(), supervisor != null);
      if (supervisor != null) {
        supervisor.watch(listener, c.gate());
      }
    }
  }
}
