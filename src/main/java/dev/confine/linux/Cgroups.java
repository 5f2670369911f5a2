package dev.confine.linux;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.regex.Matcher;
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

  private static final Pattern TREE_NAME = Pattern.compile("confine-(\\d+)-\\d+");
  private static final AtomicLong SEQUENCE = new AtomicLong();
  private static final long JVM_PID = ProcessHandle.current().pid();

  private final CgroupLayout layout;
  private final boolean useV2;
  private final Path v2Parent;
  private final Capability memory;
  private final Capability pids;
  private final Capability cpuAccounting;
  private final Capability cpuThrottle;
  private final Capability treeKill;
  private final Placement placement;
  // Idle v1 tree cgroups, emptied and reset, by their controllers: creating and removing the
  // directories of four hierarchies per exec cost ~0.5 ms of kernel time (and more offline work).
  private final Map<List<String>, Deque<V1TreeCgroup>> idle = new ConcurrentHashMap<>();
  private final AtomicInteger idleCount = new AtomicInteger();
  private final AtomicInteger idleTrackers = new AtomicInteger();
  // Idle v2 tracker cgroups (no caps, nothing to reset): mkdir and rmdir per exec are not free.
  private final Deque<V2TreeCgroup> idleV2Trackers = new ConcurrentLinkedDeque<>();

  /**
   * How many idle tree cgroups with caps are kept for reuse at most; beyond it they are removed.
   */
  public static final int MAX_IDLE = 16;

  /**
   * How many idle tracker cgroups (no caps: a freezer directory and one open file each) are kept at
   * most, apart from {@link #MAX_IDLE}: every exec takes one, so a burst of concurrent execs from
   * virtual threads finds them made instead of making and removing one per exec.
   */
  public static final int MAX_IDLE_TRACKERS = 64;

  private Cgroups(
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
    CgroupJanitor.atExit(this::removeIdle);
    // Every exec will use these threads: started now, from the thread that builds the runner (not
    // a confined one), so that the engine's thread count does not change with the first execs.
    CgroupJanitor.start();
    if (placement == Placement.THREAD_MOVE) {
      PlacementThread.start();
    }
  }

  private record ProbeKey(Version version, Path delegatedParent) {}

  private static final Map<ProbeKey, Result> PROBED = new ConcurrentHashMap<>();

  /**
   * Probes this host once per JVM for each choice: discovers the layout, checks that tree cgroups
   * can be created where they would go, and removes trees left by JVMs that died. Later calls with
   * the same arguments return the first answer, so runners are cheap to build.
   *
   * @param version which hierarchy to use
   * @param delegatedParent a v2 cgroup directory (absolute, under the v2 mount) to create trees in
   *     instead of the process's own cgroup; null for none
   * @return the cgroups of this host, or empty with the reason when none can be used
   */
  public static Result probe(Version version, Path delegatedParent) {
    return PROBED.computeIfAbsent(
        new ProbeKey(version, delegatedParent), k -> probeNow(k.version(), k.delegatedParent()));
  }

  private static Result probeNow(Version version, Path delegatedParent) {
    CgroupLayout layout;
    try {
      layout = CgroupLayout.discover();
    } catch (IOException e) {
      return new Result(null, "cannot read the cgroup layout: " + e.getMessage());
    }
    boolean v2HasControllers =
        layout.v2().map(h -> h.controllers().containsAll(Set.of("memory", "pids"))).orElse(false);
    boolean useV2 =
        switch (version) {
          case V2 -> true;
          case V1 -> false;
          case AUTO ->
              v2HasControllers || (layout.v2().isPresent() && !layout.v1().containsKey("memory"));
        };
    if (useV2 && layout.v2().isEmpty()) {
      return new Result(null, "no cgroup v2 hierarchy is mounted (" + layout.mode() + " layout)");
    }
    if (!useV2 && V1TreeCgroup.trackerController(layout.v1()) == null) {
      return new Result(
          null,
          "no cgroup v1 hierarchy that can hold a tree (freezer, cpuacct, pids or cpu) is mounted ("
              + layout.mode()
              + " layout)");
    }
    Result r = useV2 ? probeV2(layout, delegatedParent) : probeV1(layout);
    r.get().ifPresent(Cgroups::removeStaleTrees);
    return r;
  }

  /** The outcome of {@link #probe}: usable cgroups, or why there are none. */
  public static final class Result implements Availability {
    private final Cgroups cgroups;
    private final String whyNot;

    private Result(Cgroups cgroups, String whyNot) {
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

  private static Result probeV1(CgroupLayout layout) {
    Map<String, CgroupLayout.Hierarchy> v1 = layout.v1();
    String name = nextName();
    try {
      V1TreeCgroup probe = V1TreeCgroup.create(v1, name, TreeLimits.NONE);
      probe.remove();
    } catch (IOException e) {
      return new Result(null, "cannot create a cgroup beneath this process's v1 cgroups: " + e);
    }
    String placed = "; placement race-free (per-thread tasks)";
    Capability memory =
        v1.containsKey("memory")
            ? Capability.yes(
                "cgroup v1 memory.limit_in_bytes"
                    + (Files.exists(
                            v1.get("memory").ownPath().resolve("memory.memsw.limit_in_bytes"))
                        ? " and memory.memsw.limit_in_bytes"
                        : "")
                    + " under "
                    + v1.get("memory").ownPath()
                    + "; placement: the child starts in the tree's other cgroups and is moved into"
                    + " its memory cgroup right after the spawn, with whatever it forked (no JVM"
                    + " thread ever sits in a memory cgroup; what the child's exec allocated before"
                    + " the move is charged to this process's)")
            : Capability.no("no v1 memory hierarchy is mounted");
    Capability pids =
        v1.containsKey("pids")
            ? Capability.yes("cgroup v1 pids.max under " + v1.get("pids").ownPath() + placed)
            : Capability.no("no v1 pids hierarchy is mounted");
    Capability acct =
        v1.containsKey("cpuacct")
            ? Capability.yes(
                "cgroup v1 cpuacct.usage under " + v1.get("cpuacct").ownPath() + placed)
            : Capability.no("no v1 cpuacct hierarchy is mounted");
    Capability throttle =
        v1.containsKey("cpu")
            ? Capability.yes("cgroup v1 cpu.cfs_quota_us under " + v1.get("cpu").ownPath())
            : Capability.no("no v1 cpu hierarchy is mounted");
    String tracker = V1TreeCgroup.trackerController(v1);
    Capability kill =
        tracker.equals("freezer")
            ? Capability.yes(
                "cgroup v1 freezer under "
                    + v1.get("freezer").ownPath()
                    + " (a pooled tree cgroup): freeze, SIGKILL every member, thaw"
                    + placed)
            : Capability.yes(
                "cgroup v1 "
                    + tracker
                    + " under "
                    + v1.get(tracker).ownPath()
                    + " (a pooled tree cgroup; no freezer): SIGKILL every member until empty"
                    + placed);
    return new Result(
        new Cgroups(layout, false, null, memory, pids, acct, throttle, kill, Placement.THREAD_MOVE),
        null);
  }

  private static Result probeV2(CgroupLayout layout, Path delegatedParent) {
    CgroupLayout.Hierarchy h = layout.v2().orElseThrow();
    Path parent = delegatedParent != null ? delegatedParent : h.ownPath();
    if (!parent.startsWith(h.mountPoint())) {
      return new Result(null, parent + " is not beneath the cgroup v2 mount " + h.mountPoint());
    }
    Set<String> available;
    // The probe cgroup below also proves that this process may create cgroups here.
    try {
      available = Set.of(TreeCgroup.read(parent.resolve("cgroup.controllers")).split("\\s+"));
    } catch (IOException e) {
      return new Result(null, "cannot read " + parent.resolve("cgroup.controllers") + ": " + e);
    }
    List<String> enabled = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    for (String c : List.of("memory", "pids", "cpu")) {
      if (!available.contains(c)) {
        continue;
      }
      try {
        Files.writeString(parent.resolve("cgroup.subtree_control"), "+" + c);
        enabled.add(c);
      } catch (IOException e) {
        refused.add(c + " (" + e.getMessage() + ")");
      }
    }
    String name = nextName();
    boolean hasKill;
    try {
      V2TreeCgroup probe = V2TreeCgroup.create(h.mountPoint(), parent, name, TreeLimits.NONE);
      hasKill = Files.exists(probe.path().resolve("cgroup.kill"));
      probe.remove();
    } catch (IOException e) {
      return new Result(null, "cannot create a cgroup beneath " + parent + ": " + e);
    }
    Placement placement =
        Spawner.spawnIntoCgroupAvailability().isAvailable()
            ? Placement.CLONE_INTO_CGROUP
            : Placement.POST_SPAWN;
    String placed =
        placement == Placement.CLONE_INTO_CGROUP
            ? "; placement race-free (clone3 CLONE_INTO_CGROUP)"
            : "; placement post-spawn (glibc "
                + "older than 2.39 has no posix_spawnattr_setcgroup_np: the child is moved right"
                + " after the spawn, and its session swept when it may have forked by then; a"
                + " process it forks and detaches in that instant can escape)";
    String why =
        refused.isEmpty()
            ? "cgroup v2 "
                + parent
                + " does not offer the controller (cgroup.controllers: "
                + String.join(" ", available).trim()
                + ")"
            : "cgroup v2 "
                + parent
                + " refused to delegate "
                + String.join(", ", refused)
                + "; a cgroup that holds processes cannot enable controllers for its children:"
                + " start the JVM in a delegated cgroup and name an empty child of it as the parent";
    Capability memory =
        enabled.contains("memory")
            ? Capability.yes(
                "cgroup v2 memory.max, memory.swap.max=0, memory.oom.group=1 under "
                    + parent
                    + placed)
            : Capability.no(why.replace("the controller", "the memory controller"));
    Capability pids =
        enabled.contains("pids")
            ? Capability.yes("cgroup v2 pids.max under " + parent + placed)
            : Capability.no(why.replace("the controller", "the pids controller"));
    Capability acct = Capability.yes("cgroup v2 cpu.stat usage_usec under " + parent + placed);
    Capability throttle =
        enabled.contains("cpu")
            ? Capability.yes("cgroup v2 cpu.max under " + parent)
            : Capability.no(why.replace("the controller", "the cpu controller"));
    Capability kill =
        hasKill
            ? Capability.yes("cgroup v2 cgroup.kill (a tree cgroup under " + parent + ")" + placed)
            : Capability.yes(
                "cgroup v2 cgroup.procs (a tree cgroup under "
                    + parent
                    + "): SIGKILL every member until empty (no cgroup.kill before Linux 5.14)"
                    + placed);
    return new Result(
        new Cgroups(layout, true, parent, memory, pids, acct, throttle, kill, placement), null);
  }

  private static String nextName() {
    return "confine-" + JVM_PID + "-" + SEQUENCE.incrementAndGet();
  }

  /** Removes tree cgroups whose JVM is gone (killed before it could clean up). */
  void removeStaleTrees() {
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
    for (Path parent : parents) {
      try (var dirs = Files.newDirectoryStream(parent, "confine-*")) {
        for (Path d : dirs) {
          Matcher m = TREE_NAME.matcher(d.getFileName().toString());
          if (!m.matches()) {
            continue;
          }
          long owner = Long.parseLong(m.group(1));
          if (owner == JVM_PID || ProcessHandle.of(owner).isPresent()) {
            continue;
          }
          removeStale(d);
        }
      } catch (IOException e) {
        // nothing stale to see here
      }
    }
  }

  private void removeStale(Path dir) {
    try {
      TreeCgroup cg =
          useV2
              ? V2TreeCgroup.adopt(layout.v2().orElseThrow().mountPoint(), dir)
              : V1TreeCgroup.adopt(layout.v1(), dir.getFileName().toString());
      cg.remove();
    } catch (IOException | RuntimeException e) {
      // left for a later start; it holds nothing of ours
    }
  }

  /**
   * The cgroup for one tree with {@code limits} written: on v1 an idle one with the same
   * controllers when there is one, on v2 an idle tracker for a tree without caps (see {@link
   * #release}), else a new one.
   */
  public TreeCgroup create(TreeLimits limits) throws IOException {
    if (!useV2) {
      Deque<V1TreeCgroup> pool = idle.get(V1TreeCgroup.controllersFor(limits));
      V1TreeCgroup cg;
      while (pool != null && (cg = pool.pollFirst()) != null) {
        (limits.any() ? idleCount : idleTrackers).decrementAndGet();
        if (cg.reuse(limits)) {
          return cg;
        }
        CgroupJanitor.remove(cg);
      }
    }
    if (useV2 && !limits.any()) {
      V2TreeCgroup cg = idleV2Trackers.pollFirst();
      if (cg != null) {
        idleTrackers.decrementAndGet();
        return cg;
      }
    }
    String name = nextName();
    return useV2
        ? V2TreeCgroup.create(layout.v2().orElseThrow().mountPoint(), v2Parent, name, limits)
        : V1TreeCgroup.create(layout.v1(), name, limits);
  }

  /**
   * Hands back the cgroup of a tree that is over ({@code knownEmpty}: the guard saw it empty after
   * the tree, so nothing needs killing). On v1 the janitor empties and resets it off the exec's
   * path and keeps it for the next tree with the same controllers ({@link #MAX_IDLE} at most, each
   * reused {@value V1TreeCgroup#MAX_USES} times at most); on v2 an empty tracker is kept as it is
   * ({@link #MAX_IDLE_TRACKERS} at most, with v1's); otherwise it is removed.
   */
  void release(TreeCgroup cg, boolean knownEmpty) {
    if (cg instanceof V1TreeCgroup v1) {
      v1.closePlacementFiles(); // never spawned into (the program was not found): still open
      if (v1.reusableAsIs(knownEmpty) && keepIdle(v1)) {
        return; // a tracker with nothing to reset: idle again at once (see reusableAsIs)
      }
      CgroupJanitor.recycle(v1, knownEmpty, this::keepIdle);
    } else if (cg instanceof V2TreeCgroup v2
        && knownEmpty
        && v2.tracksOnly()
        && !v2.wasKilled()
        && keepIdle(v2)) {
      return; // empty, no counters a tracker reports, never killed: reused as it is
    } else {
      CgroupJanitor.remove(cg);
    }
  }

  private boolean keepIdle(V2TreeCgroup cg) {
    if (CgroupJanitor.exiting()) {
      return false;
    }
    if (idleTrackers.incrementAndGet() > MAX_IDLE_TRACKERS) {
      idleTrackers.decrementAndGet();
      return false;
    }
    idleV2Trackers.addFirst(cg);
    return true;
  }

  /** Keeps a recycled cgroup (on the janitor, or its releaser); false when enough are kept. */
  private boolean keepIdle(V1TreeCgroup cg) {
    if (CgroupJanitor.exiting()) {
      return false;
    }
    boolean tracker = !cg.limits().any();
    AtomicInteger count = tracker ? idleTrackers : idleCount;
    if (count.incrementAndGet() > (tracker ? MAX_IDLE_TRACKERS : MAX_IDLE)) {
      count.decrementAndGet();
      return false;
    }
    idle.computeIfAbsent(
            V1TreeCgroup.controllersFor(cg.limits()), k -> new ConcurrentLinkedDeque<>())
        .addFirst(cg);
    return true;
  }

  /**
   * Removes the idle tree cgroups kept by every probed {@code Cgroups} (the janitor does, see
   * {@link CgroupJanitor#awaitIdle}): for tests, and for callers that want nothing left while the
   * JVM lives on.
   */
  public static void removeAllIdle() {
    for (Result r : PROBED.values()) {
      if (r.cgroups() != null) {
        r.cgroups().removeIdle();
      }
    }
  }

  /**
   * Removes every idle tree cgroup of this instance (the janitor does); also when the JVM exits.
   */
  public void removeIdle() {
    V2TreeCgroup v2;
    while ((v2 = idleV2Trackers.pollFirst()) != null) {
      idleTrackers.decrementAndGet();
      CgroupJanitor.remove(v2);
    }
    for (Deque<V1TreeCgroup> pool : idle.values()) {
      V1TreeCgroup cg;
      while ((cg = pool.pollFirst()) != null) {
        (cg.limits().any() ? idleCount : idleTrackers).decrementAndGet();
        CgroupJanitor.remove(cg);
      }
    }
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
