package dev.confine.linux;

import dev.confine.linux.libc.LibC;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * A tree's cgroup on v1 hierarchies: one directory in each of the memory, pids, cpu, cpuacct and
 * freezer hierarchies that exist (co-mounted controllers share one). The child is placed race-free
 * by moving the spawning thread into the directories for the spawn ({@link #enterThread()}, {@link
 * #leaveThread()}): the child starts inside, so nothing it forks can be outside.
 */
final class V1TreeCgroup implements TreeCgroup {
  private static final long MAX_WAIT_NANOS = 5_000_000_000L;
  private static final int JVM_PID = (int) ProcessHandle.current().pid();
  private static final long FREEZE_WAIT_NANOS = 20_000_000L;

  private final Map<String, Path> dirs; // controller -> directory
  private final List<Path> origins; // the process's own cgroup in each hierarchy used
  private final List<Path> distinctDirs;
  private boolean removed;
  private int maxProcesses; // 0: no process cap

  private V1TreeCgroup(Map<String, Path> dirs, List<Path> origins, List<Path> distinctDirs) {
    this.dirs = dirs;
    this.origins = origins;
    this.distinctDirs = distinctDirs;
  }

  /** The controllers a tree cgroup uses when the host has them. */
  static final List<String> CONTROLLERS = List.of("memory", "pids", "cpu", "cpuacct", "freezer");

  /** A tree cgroup named {@code name} that already exists (left by a JVM that died). */
  static V1TreeCgroup adopt(Map<String, CgroupLayout.Hierarchy> v1, String name) {
    Map<String, Path> dirs = new LinkedHashMap<>();
    Map<Path, Path> originByDir = new LinkedHashMap<>();
    for (String c : CONTROLLERS) {
      CgroupLayout.Hierarchy h = v1.get(c);
      if (h != null && Files.isDirectory(h.ownPath().resolve(name))) {
        dirs.put(c, h.ownPath().resolve(name));
        originByDir.putIfAbsent(h.ownPath().resolve(name), h.ownPath());
      }
    }
    return new V1TreeCgroup(
        dirs, new ArrayList<>(originByDir.values()), new ArrayList<>(originByDir.keySet()));
  }

  /**
   * The controllers a tree with {@code limits} needs: moving a task into a v1 cpu cgroup costs up
   * to milliseconds here, so a tree joins only the hierarchies its caps use, plus the freezer (tree
   * kill) and cpuacct (CPU accounting, cheap).
   */
  static List<String> controllersFor(TreeLimits limits) {
    List<String> out = new ArrayList<>();
    if (limits.memoryBytes() > 0) {
      out.add("memory");
    }
    if (limits.maxProcesses() > 0) {
      out.add("pids");
    }
    if (limits.cpuMillicores() > 0) {
      out.add("cpu");
    }
    out.add("cpuacct");
    out.add("freezer");
    return out;
  }

  static V1TreeCgroup create(Map<String, CgroupLayout.Hierarchy> v1, String name, TreeLimits limits)
      throws IOException {
    Map<String, Path> dirs = new LinkedHashMap<>();
    Map<Path, Path> originByDir = new LinkedHashMap<>();
    for (String c : controllersFor(limits)) {
      CgroupLayout.Hierarchy h = v1.get(c);
      if (h == null) {
        continue;
      }
      Path dir = h.ownPath().resolve(name);
      dirs.put(c, dir);
      originByDir.putIfAbsent(dir, h.ownPath());
    }
    List<Path> distinct = new ArrayList<>(originByDir.keySet());
    V1TreeCgroup cg = new V1TreeCgroup(dirs, new ArrayList<>(originByDir.values()), distinct);
    try {
      for (Path d : distinct) {
        CgroupFiles.mkdir(d);
      }
      cg.applyLimits(limits);
    } catch (IOException | RuntimeException e) {
      cg.rmdirAll();
      throw e;
    }
    return cg;
  }

  private void applyLimits(TreeLimits limits) throws IOException {
    Path mem = dirs.get("memory");
    if (limits.memoryBytes() > 0) {
      CgroupFiles.write(mem.resolve("memory.limit_in_bytes"), Long.toString(limits.memoryBytes()));
      Path memsw = mem.resolve("memory.memsw.limit_in_bytes");
      if (CgroupFiles.exists(memsw)) {
        // Memory plus swap at the same limit: the tree cannot swap its way past the cap.
        CgroupFiles.write(memsw, Long.toString(limits.memoryBytes()));
      }
    }
    if (limits.maxProcesses() > 0) {
      maxProcesses = limits.maxProcesses();
      CgroupFiles.write(pidsMax(), Integer.toString(maxProcesses));
    }
    if (limits.cpuMillicores() > 0 && dirs.containsKey("cpu")) {
      Path cpu = dirs.get("cpu");
      CgroupFiles.write(cpu.resolve("cpu.cfs_period_us"), "100000");
      CgroupFiles.write(
          cpu.resolve("cpu.cfs_quota_us"),
          Long.toString(Math.max(1000, limits.cpuMillicores() * 100L)));
    }
  }

  /** Moves the calling thread into every directory of this cgroup. */
  void enterThread() throws IOException {
    if (maxProcesses > 0) {
      // The spawning thread takes one slot of pids.max while it sits inside; without one more,
      // a cap of 1 could not even start the child.
      CgroupFiles.write(pidsMax(), Integer.toString(maxProcesses + 1));
    }
    String tid = Integer.toString(Syscalls.gettid());
    for (Path d : distinctDirs) {
      CgroupFiles.write(d.resolve("tasks"), tid);
    }
  }

  /** Moves the calling thread back to the process's own cgroups. */
  void leaveThread() throws IOException {
    if (maxProcesses > 0) {
      // Restored while the thread is still inside: the tree never gets the extra slot for itself.
      CgroupFiles.write(pidsMax(), Integer.toString(maxProcesses));
    }
    String tid = Integer.toString(Syscalls.gettid());
    for (Path o : origins) {
      CgroupFiles.write(o.resolve("tasks"), tid);
    }
  }

  private Path pidsMax() {
    return dirs.get("pids").resolve("pids.max");
  }

  private Path procsDir() {
    Path f = dirs.get("freezer");
    return f != null ? f : distinctDirs.get(0);
  }

  @Override
  public void kill() throws IOException {
    Path freezer = dirs.get("freezer");
    if (freezer == null) {
      killListed(procsDir());
      return;
    }
    // Frozen processes cannot fork, so one pass over the list gets them all. A task that is
    // already dying can hold the cgroup in FREEZING, so the wait is short and the kill happens
    // either way; callers repeat it until the cgroup is empty.
    Path state = freezer.resolve("freezer.state");
    CgroupFiles.write(state, "FROZEN");
    long deadline = System.nanoTime() + FREEZE_WAIT_NANOS;
    while (!TreeCgroup.read(state).equals("FROZEN") && System.nanoTime() < deadline) {
      LockSupport.parkNanos(50_000);
    }
    try {
      killListed(freezer);
    } finally {
      CgroupFiles.write(state, "THAWED");
    }
  }

  private static void killListed(Path dir) throws IOException {
    for (String line : CgroupFiles.readLines(dir.resolve("cgroup.procs"))) {
      if (line.isBlank()) {
        continue;
      }
      int pid = Integer.parseInt(line.trim());
      // A thread of this JVM sits in the cgroup while it spawns into it (and would stay if moving
      // it back failed): its process is listed, and must never be the one killed.
      if (pid != JVM_PID) {
        Syscalls.kill(pid, LibC.SIGKILL());
      }
    }
  }

  @Override
  public boolean hasProcesses() throws IOException {
    for (String line : CgroupFiles.readLines(procsDir().resolve("cgroup.procs"))) {
      if (!line.isBlank() && Integer.parseInt(line.trim()) != JVM_PID) {
        return true;
      }
    }
    return false;
  }

  @Override
  public long cpuUsageNanos() throws IOException {
    Path acct = dirs.get("cpuacct");
    return acct == null ? -1 : Long.parseLong(TreeCgroup.read(acct.resolve("cpuacct.usage")));
  }

  @Override
  public boolean oomKilled() throws IOException {
    Path mem = dirs.get("memory");
    return mem != null && TreeCgroup.keyed(mem.resolve("memory.oom_control"), "oom_kill") > 0;
  }

  @Override
  public TreeUsage usage() {
    long peak = -1;
    long user = -1;
    long sys = -1;
    boolean pidsHit = false;
    try {
      Path mem = dirs.get("memory");
      if (mem != null) {
        peak = Long.parseLong(TreeCgroup.read(mem.resolve("memory.max_usage_in_bytes")));
      }
      Path acct = dirs.get("cpuacct");
      if (acct != null && CgroupFiles.exists(acct.resolve("cpuacct.usage_user"))) {
        user = Long.parseLong(TreeCgroup.read(acct.resolve("cpuacct.usage_user")));
        sys = Long.parseLong(TreeCgroup.read(acct.resolve("cpuacct.usage_sys")));
      }
      Path pids = dirs.get("pids");
      if (pids != null) {
        pidsHit = TreeCgroup.keyed(pids.resolve("pids.events"), "max") > 0;
      }
    } catch (IOException | NumberFormatException e) {
      // usage is best effort: what could not be read stays unmeasured
    }
    return new TreeUsage(peak, user, sys, pidsHit);
  }

  @Override
  public synchronized void remove() throws IOException {
    if (removed || distinctDirs.isEmpty()) {
      return;
    }
    TreeCgroup.killAndDrain(this, MAX_WAIT_NANOS);
    rmdirAll();
    removed = true;
  }

  private void rmdirAll() throws IOException {
    IOException first = null;
    for (Path d : distinctDirs) {
      try {
        CgroupFiles.rmdirIfExists(d);
      } catch (NoSuchFileException ignored) {
        // already gone
      } catch (IOException e) {
        if (first == null) {
          first = e;
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  @Override
  public Path path() {
    return procsDir();
  }

  @Override
  public String toString() {
    return "v1 cgroup " + dirs.values();
  }
}
