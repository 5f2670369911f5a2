package dev.confine.bench;

import dev.confine.linux.Engine;
import dev.confine.linux.cgroup.CgroupGuard;
import dev.confine.linux.cgroup.CgroupLayout;
import dev.confine.linux.cgroup.Cgroups;
import dev.confine.linux.child.ChildOutcome;
import dev.confine.linux.child.Execution;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.tree.Cap;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.linux.tree.TreeLimits;
import dev.confine.linux.tree.TreeUsage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Where the time of a capped exec goes: the per-exec costs of a cgroup v1 tree with a memory and a
 * process cap (what {@link CapsBench#cgroupV1} pays and {@link CapsBench#uncapped} does not).
 *
 * <p>Two views, interleaved in one loop so that the machine's load hits them alike:
 *
 * <ul>
 *   <li><b>The engine's own code</b>, through its public pieces: {@code /bin/true} run with {@link
 *       Execution#runToCompletion} under the library's {@link CgroupGuard} wrapped in a guard that
 *       times each call the execution makes (create, spawn with placement, started, hasProcesses,
 *       exceeded, usage, close), against the same exec under {@link TreeGuard#NONE}, timed alike.
 *   <li><b>The kernel's share</b>: the same file operations done by hand on the same hierarchies
 *       (mkdir of the 4 directories, the 2 limit writes, this thread's tid written into the 4
 *       {@code tasks} files and back, the usage and state reads, the 4 rmdirs), each timed alone.
 * </ul>
 *
 * <p>Usage: {@code CapsProfile [--iterations N] [--out caps-profile.json]}. Needs root and the v1
 * memory, pids, cpuacct and freezer hierarchies.
 */
public final class CapsProfile {
  private static final long MEMORY = 256L << 20;
  private static final int PROCESSES = 64;
  private static final List<String> CONTROLLERS = List.of("memory", "pids", "cpuacct", "freezer");
  private static final long DRAIN = Engine.DRAIN.toNanos(); // as LocalRunner.exec waits

  private CapsProfile() {}

  public static void main(String[] args) throws Exception {
    int iterations = 2000;
    Path out = Path.of("target/bench/caps-profile.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Cgroups cgroups =
        Cgroups.probe(Cgroups.Version.V1, null)
            .get()
            .orElseThrow(() -> new IllegalStateException("no cgroup v1 here"));
    Map<String, CgroupLayout.Hierarchy> v1 = cgroups.layout().v1();
    for (String c : CONTROLLERS) {
      if (!v1.containsKey(c)) {
        throw new IllegalStateException("no v1 " + c + " hierarchy here");
      }
    }
    TreeLimits limits = new TreeLimits(MEMORY, PROCESSES, 0, 0);
    Path dir = Files.createTempDirectory("confine-profile");
    SpawnSpec spec =
        new SpawnSpec(
            "/bin/true",
            List.of("/bin/true"),
            List.of("PATH=/usr/bin:/bin"),
            dir.toString(),
            false);
    Timings t = new Timings();
    List<Path> warm = new ArrayList<>();
    try {
      for (String c : CONTROLLERS) {
        warm.add(Files.createDirectory(v1.get(c).ownPath().resolve(treeName("warm"))));
      }
      writeLimits(warm);
      int warmup = Math.max(50, iterations / 10);
      for (int i = 0; i < warmup + iterations; i++) {
        boolean measure = i >= warmup;
        Timings into = measure ? t : new Timings();
        uncapped(spec, into);
        capped(cgroups, limits, spec, into);
        byHand(v1, warm, spec, i, into);
        handOff(into);
        handOffSpawn(v1, warm, spec, into);
        handOffPlainSpawn(spec, into);
        for (Placement p : Placement.values()) {
          placement(p, v1, warm, spec, into);
        }
      }
    } finally {
      for (Path w : warm) {
        Files.deleteIfExists(w);
      }
      Files.deleteIfExists(dir);
    }
    t.print(iterations);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, t.json(iterations) + "\n", StandardCharsets.UTF_8);
  }

  private static void uncapped(SpawnSpec spec, Timings t) {
    TimingGuard g = new TimingGuard(TreeGuard.NONE, t, "uncapped.");
    long start = System.nanoTime();
    ChildOutcome c = Execution.start(spec, null, 1 << 16, g).runToCompletion(Long.MAX_VALUE, DRAIN);
    t.add("uncapped.total", System.nanoTime() - start);
    check(c);
  }

  private static void capped(Cgroups cgroups, TreeLimits limits, SpawnSpec spec, Timings t) {
    long start = System.nanoTime();
    CgroupGuard inner = new CgroupGuard(cgroups, limits);
    t.add("capped.create (idle cgroup or mkdir, limits)", System.nanoTime() - start);
    TimingGuard g = new TimingGuard(inner, t, "capped.");
    ChildOutcome c = Execution.start(spec, null, 1 << 16, g).runToCompletion(Long.MAX_VALUE, DRAIN);
    t.add("capped.total", System.nanoTime() - start);
    check(c);
    if (c.usage().peakMemoryBytes() < 0) {
      throw new IllegalStateException("no usage from the cgroup: " + c.usage());
    }
  }

  private static void check(ChildOutcome c) {
    if (c.exit() == null || c.exit().signaled() || c.exit().code() != 0) {
      throw new IllegalStateException("/bin/true did not exit 0: " + c);
    }
  }

  /** The v1 operations of one tree, by hand, each timed alone, around a real spawn. */
  private static void byHand(
      Map<String, CgroupLayout.Hierarchy> v1, List<Path> warm, SpawnSpec spec, int i, Timings t)
      throws IOException {
    List<Path> dirs = new ArrayList<>();
    for (String c : CONTROLLERS) {
      dirs.add(v1.get(c).ownPath().resolve(treeName(i)));
    }
    long s = System.nanoTime();
    for (int k = 0; k < dirs.size(); k++) {
      long s1 = System.nanoTime();
      Files.createDirectory(dirs.get(k));
      t.add("hand.mkdir " + CONTROLLERS.get(k), System.nanoTime() - s1);
    }
    t.add("hand.mkdir x4", System.nanoTime() - s);
    s = System.nanoTime();
    writeLimits(dirs);
    t.add("hand.write limits x2", System.nanoTime() - s);
    s = System.nanoTime();
    Files.exists(dirs.get(0).resolve("memory.memsw.limit_in_bytes"));
    t.add("hand.exists memsw", System.nanoTime() - s);
    // The spawn on this thread, moved into the new directories and back by hand: no hand-off.
    ChildOutcome c =
        Execution.start(spec, null, 1 << 16, new HandGuard(dirs, origins(v1), t, "hand."))
            .runToCompletion(Long.MAX_VALUE, DRAIN);
    check(c);
    s = System.nanoTime();
    Files.readString(dirs.get(3).resolve("cgroup.procs"));
    t.add("hand.read cgroup.procs", System.nanoTime() - s);
    s = System.nanoTime();
    Files.readAllLines(dirs.get(0).resolve("memory.oom_control"));
    t.add("hand.read memory.oom_control", System.nanoTime() - s);
    s = System.nanoTime();
    Files.readString(dirs.get(0).resolve("memory.max_usage_in_bytes"));
    Files.exists(dirs.get(2).resolve("cpuacct.usage_user"));
    Files.readString(dirs.get(2).resolve("cpuacct.usage_user"));
    Files.readString(dirs.get(2).resolve("cpuacct.usage_sys"));
    Files.readAllLines(dirs.get(1).resolve("pids.events"));
    t.add("hand.read usage (4 files)", System.nanoTime() - s);
    s = System.nanoTime();
    for (int k = 0; k < dirs.size(); k++) {
      long s1 = System.nanoTime();
      Files.delete(dirs.get(k));
      t.add("hand.rmdir " + CONTROLLERS.get(k), System.nanoTime() - s1);
    }
    t.add("hand.rmdir x4", System.nanoTime() - s);
    // The same spawn into one set of directories made once and reused (a pool of one).
    c =
        Execution.start(spec, null, 1 << 16, new HandGuard(warm, origins(v1), t, "warm."))
            .runToCompletion(Long.MAX_VALUE, DRAIN);
    check(c);
  }

  private static final BlockingQueue<Runnable> HANDOFF = new LinkedBlockingQueue<>();

  static {
    Thread.ofPlatform()
        .name("profile-handoff")
        .daemon()
        .start(
            () -> {
              while (true) {
                try {
                  HANDOFF.take().run();
                } catch (InterruptedException e) {
                  // keep serving
                }
              }
            });
  }

  /**
   * A round trip to a platform thread that waits on a queue, with an empty task: the hand-off
   * mechanism of the library's placement thread (a LinkedBlockingQueue and a CompletableFuture),
   * priced alone.
   */
  private static void handOff(Timings t) throws Exception {
    long s = System.nanoTime();
    CompletableFuture<Integer> done = new CompletableFuture<>();
    HANDOFF.add(() -> done.complete(1));
    done.get();
    t.add("handoff.round trip, empty task", System.nanoTime() - s);
  }

  /**
   * The warm spawn again, but done on the hand-off thread as the library's placement thread does:
   * the caller queues the work and waits for the result while the child already runs.
   */
  private static void handOffSpawn(
      Map<String, CgroupLayout.Hierarchy> v1, List<Path> warm, SpawnSpec spec, Timings t) {
    HandGuard onThread = new HandGuard(warm, origins(v1), t, "handoff.");
    TreeGuard viaQueue =
        s -> {
          long start = System.nanoTime();
          CompletableFuture<Spawner.Spawned> done = new CompletableFuture<>();
          HANDOFF.add(
              () -> {
                try {
                  done.complete(onThread.spawn(s));
                } catch (RuntimeException e) {
                  done.completeExceptionally(e);
                }
              });
          try {
            return done.join();
          } finally {
            t.add("handoff.spawn as the caller sees it", System.nanoTime() - start);
          }
        };
    check(Execution.start(spec, null, 1 << 16, viaQueue).runToCompletion(Long.MAX_VALUE, DRAIN));
  }

  /** A spawn outside any cgroup, on the hand-off thread: the thread's share without cgroups. */
  private static void handOffPlainSpawn(SpawnSpec spec, Timings t) {
    TreeGuard viaQueue =
        s -> {
          CompletableFuture<Spawner.Spawned> done = new CompletableFuture<>();
          HANDOFF.add(
              () -> {
                long start = System.nanoTime();
                try {
                  done.complete(Spawner.spawn(s));
                } catch (RuntimeException e) {
                  done.completeExceptionally(e);
                } finally {
                  t.add("handoff.spawn outside any cgroup", System.nanoTime() - start);
                }
              });
          return done.join();
        };
    check(Execution.start(spec, null, 1 << 16, viaQueue).runToCompletion(Long.MAX_VALUE, DRAIN));
  }

  /**
   * The ways a memory cgroup can hold the child, measured on the reused directories (issue 15,
   * finding 6: the spawning thread must never be charged to, or limited by, the child's memory
   * cgroup).
   */
  enum Placement {
    /** The thread visits all four hierarchies for the spawn: charged and limited there (before). */
    THREAD_IN_MEMORY("thread in memory (before)"),
    /**
     * The thread visits all but memory; the child is moved into memory after the spawn, with what
     * its freezer cgroup lists (the library's way now).
     */
    MEMORY_AFTER_SPAWN("memory after the spawn (chosen)"),
    /**
     * The thread visits all four, the limit raised to unlimited while it is inside and lowered once
     * it has left: not limited, still charged.
     */
    LIMIT_RAISED("limit raised while inside");

    final String label;

    Placement(String label) {
      this.label = label;
    }
  }

  private static void placement(
      Placement p,
      Map<String, CgroupLayout.Hierarchy> v1,
      List<Path> warm,
      SpawnSpec spec,
      Timings t)
      throws IOException {
    long start = System.nanoTime();
    ChildOutcome c =
        Execution.start(spec, null, 1 << 16, new PlacementGuard(p, warm, origins(v1)))
            .runToCompletion(Long.MAX_VALUE, DRAIN);
    t.add("placement." + p.label, System.nanoTime() - start);
    check(c);
  }

  /** Places a spawn in the reused directories (memory, pids, cpuacct, freezer) as {@code mode}. */
  private static final class PlacementGuard implements TreeGuard {
    private final Placement mode;
    private final List<Path> dirs;
    private final List<Path> origins;

    PlacementGuard(Placement mode, List<Path> dirs, List<Path> origins) {
      this.mode = mode;
      this.dirs = dirs;
      this.origins = origins;
    }

    @Override
    public Spawner.Spawned spawn(SpawnSpec spec) {
      try {
        String tid = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
        Path memory = dirs.get(0);
        Path limit = memory.resolve("memory.limit_in_bytes");
        Path memsw = memory.resolve("memory.memsw.limit_in_bytes");
        boolean swap = Files.exists(memsw);
        int first = mode == Placement.MEMORY_AFTER_SPAWN ? 1 : 0;
        if (mode == Placement.LIMIT_RAISED) {
          if (swap) {
            Files.writeString(memsw, "-1");
          }
          Files.writeString(limit, "-1");
        }
        for (int k = first; k < dirs.size(); k++) {
          Files.writeString(dirs.get(k).resolve("tasks"), tid);
        }
        Spawner.Spawned s;
        try {
          s = Spawner.spawn(spec);
        } finally {
          for (int k = first; k < origins.size(); k++) {
            Files.writeString(origins.get(k).resolve("tasks"), tid);
          }
          if (mode == Placement.LIMIT_RAISED) {
            Files.writeString(limit, Long.toString(MEMORY));
            if (swap) {
              Files.writeString(memsw, Long.toString(MEMORY));
            }
          }
        }
        if (mode == Placement.MEMORY_AFTER_SPAWN) {
          Files.writeString(memory.resolve("cgroup.procs"), Integer.toString(s.pid()));
          Files.readString(dirs.get(3).resolve("cgroup.procs")); // what else to move: nothing here
        }
        return s;
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  private static String treeName(Object suffix) {
    return "confine-profile-" + ProcessHandle.current().pid() + "-" + suffix;
  }

  private static List<Path> origins(Map<String, CgroupLayout.Hierarchy> v1) {
    return CONTROLLERS.stream().map(c -> v1.get(c).ownPath()).toList();
  }

  private static void writeLimits(List<Path> dirs) throws IOException {
    Files.writeString(dirs.get(0).resolve("memory.limit_in_bytes"), Long.toString(MEMORY));
    Files.writeString(dirs.get(1).resolve("pids.max"), Integer.toString(PROCESSES));
  }

  /**
   * Spawns on the calling thread after writing its tid into the directories' {@code tasks} files
   * and writes it back to the origins after, each step timed: what the library's placement thread
   * does, without the hand-off to it.
   */
  private static final class HandGuard implements TreeGuard {
    private final List<Path> dirs;
    private final List<Path> origins;
    private final Timings t;
    private final String prefix;

    HandGuard(List<Path> dirs, List<Path> origins, Timings t, String prefix) {
      this.dirs = dirs;
      this.origins = origins;
      this.t = t;
      this.prefix = prefix;
    }

    @Override
    public Spawner.Spawned spawn(SpawnSpec spec) {
      try {
        String tid = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
        long s = System.nanoTime();
        for (int k = 0; k < dirs.size(); k++) {
          long s1 = System.nanoTime();
          Files.writeString(dirs.get(k).resolve("tasks"), tid);
          t.add(prefix + "enter " + CONTROLLERS.get(k), System.nanoTime() - s1);
        }
        t.add(prefix + "enter x4 (tid into tasks)", System.nanoTime() - s);
        Spawner.Spawned spawned;
        s = System.nanoTime();
        try {
          spawned = Spawner.spawn(spec);
        } finally {
          t.add(prefix + "spawn inside the cgroups", System.nanoTime() - s);
          s = System.nanoTime();
          for (int k = 0; k < origins.size(); k++) {
            long s1 = System.nanoTime();
            Files.writeString(origins.get(k).resolve("tasks"), tid);
            t.add(prefix + "leave " + CONTROLLERS.get(k), System.nanoTime() - s1);
          }
          t.add(prefix + "leave x4 (tid back)", System.nanoTime() - s);
        }
        return spawned;
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  /** Times every call an execution makes to its guard. */
  private static final class TimingGuard implements TreeGuard {
    private final TreeGuard inner;
    private final Timings t;
    private final String prefix;

    TimingGuard(TreeGuard inner, Timings t, String prefix) {
      this.inner = inner;
      this.t = t;
      this.prefix = prefix;
    }

    @Override
    public Spawner.Spawned spawn(SpawnSpec spec) {
      long s = System.nanoTime();
      try {
        return inner.spawn(spec);
      } finally {
        t.add(prefix + "spawn (with placement)", System.nanoTime() - s);
      }
    }

    @Override
    public void started(int pid) {
      long s = System.nanoTime();
      inner.started(pid);
      t.add(prefix + "started (cap watch)", System.nanoTime() - s);
    }

    @Override
    public void killTree() {
      long s = System.nanoTime();
      inner.killTree();
      t.add(prefix + "killTree", System.nanoTime() - s);
    }

    @Override
    public boolean hasProcesses() {
      long s = System.nanoTime();
      try {
        return inner.hasProcesses();
      } finally {
        t.add(prefix + "hasProcesses", System.nanoTime() - s);
      }
    }

    @Override
    public Cap exceeded() {
      long s = System.nanoTime();
      try {
        return inner.exceeded();
      } finally {
        t.add(prefix + "exceeded", System.nanoTime() - s);
      }
    }

    @Override
    public Throwable unenforceable() {
      return inner.unenforceable();
    }

    @Override
    public TreeUsage usage() {
      long s = System.nanoTime();
      try {
        return inner.usage();
      } finally {
        t.add(prefix + "usage", System.nanoTime() - s);
      }
    }

    @Override
    public void close() {
      long s = System.nanoTime();
      inner.close();
      t.add(prefix + "close (usage, release)", System.nanoTime() - s);
    }
  }

  /** Sums and samples per piece, in insertion order. */
  private static final class Timings {
    private final Map<String, List<Long>> samples = new LinkedHashMap<>();

    void add(String piece, long nanos) {
      samples.computeIfAbsent(piece, k -> new ArrayList<>()).add(nanos);
    }

    private static double[] micros(List<Long> v) {
      return v.stream().mapToDouble(n -> n / 1000.0).sorted().toArray();
    }

    void print(int iterations) {
      System.out.printf(
          Locale.ROOT,
          "per-exec costs of a v1 cgroup with memory + pids caps, %d iterations (us;"
              + " per exec = sum / iterations):%n",
          iterations);
      System.out.printf(
          Locale.ROOT, "  %-40s %6s %9s %9s %9s%n", "piece", "calls", "per exec", "median", "p90");
      samples.forEach(
          (k, v) -> {
            double[] us = micros(v);
            System.out.printf(
                Locale.ROOT,
                "  %-40s %6d %9.1f %9.1f %9.1f%n",
                k,
                us.length,
                Arrays.stream(us).sum() / iterations,
                CapsReport.percentile(us, 50),
                CapsReport.percentile(us, 90));
          });
    }

    String json(int iterations) {
      Map<String, Object> pieces = new LinkedHashMap<>();
      samples.forEach(
          (k, v) -> {
            double[] us = micros(v);
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("calls", us.length);
            p.put("perExecUs", Arrays.stream(us).sum() / iterations);
            p.put("medianUs", CapsReport.percentile(us, 50));
            p.put("p90Us", CapsReport.percentile(us, 90));
            pieces.put(k, p);
          });
      Map<String, Object> o = new LinkedHashMap<>();
      o.put("iterations", iterations);
      o.put("memoryBytes", MEMORY);
      o.put("maxProcesses", PROCESSES);
      o.put("pieces", pieces);
      return CapsReport.Json.write(o);
    }
  }
}
