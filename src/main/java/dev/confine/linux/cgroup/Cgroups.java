package dev.confine.linux.cgroup;

import dev.confine.linux.spawn.PlacementThread;
import dev.confine.linux.spawn.SpawnPlacement;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.Availability;
import dev.confine.linux.sys.EngineException;
import dev.confine.linux.sys.Syscalls;
import dev.confine.linux.tree.TreeLimits;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Creates one cgroup per process tree on the hierarchy this host offers, and says exactly what it
 * can enforce and how. Never moves the JVM: v1 trees go beneath the process's own cgroups (a
 * dedicated thread visits them to spawn); v2 trees beneath the process's own cgroup, or a delegated
 * parent the user names.
 */
public final class Cgroups {
  /** Which hierarchy to use. */
  public enum Version {
    /** v2 where it has the controllers, else v1, else v2 for kill and accounting only. */
    AUTO,
    /** The v1 hierarchies. */
    V1,
    /** The unified hierarchy. */
    V2
  }

  /** How a child gets into its cgroup. */
  public enum Placement {
    /** v1: the spawning thread sits in the cgroup during the spawn; nothing can escape. */
    THREAD_MOVE,
    /** v2 with glibc 2.39+: clone3 CLONE_INTO_CGROUP; nothing can escape. */
    CLONE_INTO_CGROUP,
    /**
     * v2 with an older glibc: moved right after the spawn, then its session swept when it may have
     * forked before; racy.
     */
    POST_SPAWN
  }

  /**
   * One capability: whether it holds, and by which mechanism or why not.
   *
   * @param available whether it holds on this host
   * @param detail the mechanism when available, the reason when not
   */
  public record Capability(boolean available, String detail) {
    static Capability yes(String how) {
      return new Capability(true, how);
    }

    static Capability no(String why) {
      return new Capability(false, why);
    }
  }

  // Tree cgroups are named confine-<JVM pid>-<sequence> (nextName), so that a later JVM can tell
  // whose they are (CgroupProbe.removeStaleTrees).
  static final Pattern TREE_NAME = Pattern.compile("confine-(\\d+)-\\d+");
  static final long JVM_PID = ProcessHandle.current().pid();
  private static final AtomicLong SEQUENCE = new AtomicLong();

  private final CgroupLayout layout;
  private final boolean useV2;
  private final Path v2Parent;
  private final Capability memory;
  private final Capability pids;
  private final Capability cpuAccounting;
  private final Capability cpuThrottle;
  private final Capability treeKill;
  private final Placement placement;
  private final CgroupPool pool;

  Cgroups(
      CgroupLayout layout,
      boolean useV2,
      Path v2Parent,
      Capability memory,
      Capability pids,
      Capability cpuAccounting,
      Capability cpuThrottle,
      Capability treeKill,
      Placement placement) {
    this.layout = layout;
    this.useV2 = useV2;
    this.v2Parent = v2Parent;
    this.memory = memory;
    this.pids = pids;
    this.cpuAccounting = cpuAccounting;
    this.cpuThrottle = cpuThrottle;
    this.treeKill = treeKill;
    this.placement = placement;
    this.pool = new CgroupPool(useV2);
    CgroupJanitor.atExit(pool::removeIdle);
    // Every exec will use these threads: started now, from the thread that builds the runner (not
    // a confined one), so that the engine's thread count does not change with the first execs.
    CgroupJanitor.start();
    if (placement == Placement.THREAD_MOVE) {
      PlacementThread.start();
    }
  }

  /**
   * The cgroups of this host for {@code version}, probed once per JVM and choice ({@link
   * CgroupProbe}): later calls with the same arguments return the first answer, so runners are
   * cheap to build.
   *
   * @param version which hierarchy to use
   * @param delegatedParent a v2 cgroup directory (absolute, under the v2 mount) to create trees in
   *     instead of the process's own cgroup; null for none
   * @return the cgroups of this host, or empty with the reason when none can be used
   */
  public static Result probe(Version version, Path delegatedParent) {
    return CgroupProbe.probe(version, delegatedParent);
  }

  /** The outcome of {@link #probe}: usable cgroups, or why there are none. */
  public static final class Result implements Availability {
    private final Cgroups cgroups;
    private final String whyNot;

    Result(Cgroups cgroups, String whyNot) {
      this.cgroups = cgroups;
      this.whyNot = whyNot;
    }

    /** The usable cgroups, or null. */
    public Cgroups cgroups() {
      return cgroups;
    }

    /** The cgroups, when usable. */
    public Optional<Cgroups> get() {
      return Optional.ofNullable(cgroups);
    }

    /** Why no cgroups are usable; empty when they are. */
    @Override
    public Optional<String> unavailabilityCause() {
      return Optional.ofNullable(whyNot);
    }

    @Override
    public String toString() {
      return cgroups != null ? "Result[usable]" : "Result[" + whyNot + "]";
    }
  }

  static String nextName() {
    return "confine-" + JVM_PID + "-" + SEQUENCE.incrementAndGet();
  }

  /**
   * The cgroup for one tree with {@code limits} written: an idle one from the pool when one fits
   * (see {@link CgroupPool#take}), else a new one.
   */
  public TreeCgroup create(TreeLimits limits) throws IOException {
    TreeCgroup idle = pool.take(limits);
    if (idle != null) {
      return idle;
    }
    String name = nextName();
    return useV2
        ? V2TreeCgroup.create(layout.v2().orElseThrow().mountPoint(), v2Parent, name, limits)
        : V1TreeCgroup.create(layout.v1(), name, limits);
  }

  /**
   * Hands back the cgroup of a tree that is over ({@code knownEmpty}: the guard saw it empty after
   * the tree), to be kept idle or removed ({@link CgroupPool#release}).
   */
  void release(TreeCgroup cg, boolean knownEmpty) {
    pool.release(cg, knownEmpty);
  }

  /**
   * The directories this instance makes tree cgroups in: one per v1 hierarchy, or the v2 parent.
   */
  List<Path> treeParents() {
    List<Path> parents = new ArrayList<>();
    if (useV2) {
      parents.add(v2Parent);
    } else {
      for (CgroupLayout.Hierarchy h : layout.v1().values()) {
        if (!parents.contains(h.ownPath())) {
          parents.add(h.ownPath());
        }
      }
    }
    return parents;
  }

  /** The tree cgroup named by {@code dir} (in one of the {@link #treeParents}), made by any JVM. */
  TreeCgroup adopt(Path dir) throws IOException {
    return useV2
        ? V2TreeCgroup.adopt(layout.v2().orElseThrow().mountPoint(), dir)
        : V1TreeCgroup.adopt(layout.v1(), dir.getFileName().toString());
  }

  /**
   * Removes the idle tree cgroups kept by every probed {@code Cgroups} (the janitor does, see
   * {@link CgroupJanitor#awaitIdle}): for tests, and for callers that want nothing left while the
   * JVM lives on.
   */
  public static void removeAllIdle() {
    CgroupProbe.forEachProbed(c -> c.pool.removeIdle());
  }

  /**
   * Spawns {@code spec} into {@code cg} on the calling thread (a virtual thread hands it to a
   * placement thread) the way this host allows (see {@link #placement()} and {@link
   * #placement(TreeCgroup)}).
   *
   * @throws EngineException when the child could not be placed (it is killed and reaped)
   */
  public Spawner.Spawned spawn(TreeCgroup cg, SpawnSpec spec) {
    SpawnPlacement p = placement(cg);
    Spawner.Spawned s;
    try {
      Supplier<Spawner.Spawned> placed = () -> SpawnPlacement.spawnHere(p, spec, null);
      // A platform thread can visit the child's cgroups itself for the few hundred microseconds
      // of the spawn; a virtual thread could change carriers between the moves, so it hands the
      // spawn to a placement thread.
      s =
          p.movesThread() && Thread.currentThread().isVirtual()
              ? PlacementThread.call(placed)
              : placed.get();
    } finally {
      p.release();
    }
    p.adopt(s);
    return s;
  }

  /**
   * How a child gets into {@code cg}, for one spawn on whatever thread: on v1 the spawning thread
   * visits every hierarchy but memory for the spawn (through files the cgroup opened when it was
   * made or taken for this tree), and the caller moves the child into its memory cgroup right after
   * (see {@link V1TreeCgroup#adoptIntoMemory}); on v2 the spawn clones into it (glibc 2.39 and
   * newer) or the caller moves the child and its session right after.
   *
   * @throws EngineException when the v2 directory cannot be opened
   */
  public SpawnPlacement placement(TreeCgroup cg) {
    return switch (cg) {
      case V1TreeCgroup v1 ->
          new SpawnPlacement() {
            @Override
            public void enter(int tid) throws IOException {
              v1.enterThread(tid);
            }

            @Override
            public void leave(int tid) throws IOException {
              v1.leaveThread(tid);
            }

            @Override
            public boolean movesThread() {
              return true;
            }

            @Override
            public void release() {
              v1.closePlacementFiles(); // a live tree holds no descriptor of its cgroup
            }

            @Override
            public void adopt(Spawner.Spawned child) {
              if (!v1.hasMemory()) {
                return;
              }
              try {
                v1.adoptIntoMemory(child.pid());
              } catch (IOException | RuntimeException e) {
                abandon(child, v1);
                throw new EngineException("cannot move the child into its memory cgroup", e);
              }
            }

            @Override
            public boolean adoptsAtOnce() {
              return v1.hasMemory();
            }
          };
      case V2TreeCgroup v2 when placement == Placement.CLONE_INTO_CGROUP -> {
        int fd = v2.openForClone();
        yield new SpawnPlacement() {
          private boolean released;

          @Override
          public int cloneIntoCgroup() {
            return fd;
          }

          @Override
          public synchronized void release() {
            if (!released) {
              released = true;
              Syscalls.close(fd);
            }
          }
        };
      }
      case V2TreeCgroup v2 ->
          new SpawnPlacement() {
            @Override
            public void adopt(Spawner.Spawned child) {
              try {
                v2.migrate(child.pid());
              } catch (IOException e) {
                abandon(child, v2);
                throw new EngineException("cannot move the child into " + v2.path(), e);
              }
            }

            @Override
            public boolean adoptsAtOnce() {
              return true;
            }
          };
    };
  }

  /** Kills a child that could not be placed, and what it started, reaps it and closes its fds. */
  private static void abandon(Spawner.Spawned s, TreeCgroup cg) {
    try {
      cg.kill();
    } catch (IOException e) {
      // the group kill below, and the guard's close, which kills until the cgroup is empty
    }
    Spawner.abandon(s, true);
  }

  /**
   * Whether trees are made in the v2 hierarchy (beneath the delegated parent, when one was given).
   */
  public boolean isV2() {
    return useV2;
  }

  /** The layout found. */
  public CgroupLayout layout() {
    return layout;
  }

  /** Memory caps. */
  public Capability memory() {
    return memory;
  }

  /** Process caps. */
  public Capability pids() {
    return pids;
  }

  /** Exact CPU accounting (for CPU budgets). */
  public Capability cpuAccounting() {
    return cpuAccounting;
  }

  /** CPU throttling to the millicores. */
  public Capability cpuThrottle() {
    return cpuThrottle;
  }

  /** Killing the whole tree, escapees from the process group included. */
  public Capability treeKill() {
    return treeKill;
  }

  /** How children get into their cgroup. */
  public Placement placement() {
    return placement;
  }
}
