package dev.confine.linux.cgroup;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.proc.PidList;
import dev.confine.linux.proc.ProcFiles;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.Syscalls;
import dev.confine.linux.tree.TreeLimits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A tree's cgroup on the unified (v2) hierarchy: one directory with {@code memory.max}, {@code
 * memory.swap.max=0}, {@code memory.oom.group=1}, {@code pids.max} and {@code cpu.max} where the
 * parent delegates those controllers; killed with {@code cgroup.kill}; CPU from {@code cpu.stat},
 * which every v2 cgroup has.
 */
final class V2TreeCgroup implements TreeCgroup {
  private static final long MAX_WAIT_NANOS = 5_000_000_000L;

  private final Path dir;
  private final String procCgroupLine; // how /proc/<pid>/cgroup names this cgroup
  private final boolean tracker; // made without caps: nothing written, nothing to reset
  private boolean removed;
  private volatile boolean killed;

  private V2TreeCgroup(Path dir, Path mountPoint, boolean tracker) {
    this.dir = dir;
    this.procCgroupLine = "0::/" + mountPoint.relativize(dir);
    this.tracker = tracker;
  }

  /** The existing tree cgroup at {@code dir} (left by a JVM that died). */
  static V2TreeCgroup adopt(Path mountPoint, Path dir) {
    return new V2TreeCgroup(dir, mountPoint, false);
  }

  /**
   * Whether this cgroup only tracks a tree (made without caps), so that an empty one can serve
   * again.
   */
  boolean tracksOnly() {
    return tracker;
  }

  /**
   * Whether {@code cgroup.kill} was written to this cgroup. Such a cgroup is never used again:
   * after it, every child cloned into it (clone3 CLONE_INTO_CGROUP) was SIGKILLed at birth on Linux
   * 6.18 (the kernel compares the kill count of the parent's cgroup with the target's).
   */
  boolean wasKilled() {
    return killed;
  }

  /**
   * Creates {@code parent/name} with {@code limits}; the controllers the limits need must be
   * enabled in the parent's {@code cgroup.subtree_control} (see {@link Cgroups}).
   */
  static V2TreeCgroup create(Path mountPoint, Path parent, String name, TreeLimits limits)
      throws IOException {
    Path dir = parent.resolve(name);
    CgroupFiles.mkdir(dir);
    V2TreeCgroup cg = new V2TreeCgroup(dir, mountPoint, !limits.any());
    try {
      if (limits.memoryBytes() > 0) {
        CgroupFiles.write(dir.resolve("memory.max"), Long.toString(limits.memoryBytes()));
        Path swap = dir.resolve("memory.swap.max");
        if (CgroupFiles.exists(swap)) {
          CgroupFiles.write(swap, "0");
        }
        // One OOM kill takes the whole tree: a half-killed build is worse than a dead one.
        CgroupFiles.write(dir.resolve("memory.oom.group"), "1");
      }
      if (limits.maxProcesses() > 0) {
        CgroupFiles.write(dir.resolve("pids.max"), Integer.toString(limits.maxProcesses()));
      }
      if (limits.cpuThrottleMillicores() > 0 && CgroupFiles.exists(dir.resolve("cpu.max"))) {
        CgroupFiles.write(
            dir.resolve("cpu.max"),
            Math.max(1000, limits.cpuThrottleMillicores() * 100L) + " 100000");
      }
    } catch (IOException | RuntimeException e) {
      CgroupFiles.rmdirIfExists(dir);
      throw e;
    }
    return cg;
  }

  /** Opens the directory for CLONE_INTO_CGROUP; the caller closes the fd. */
  int openForClone() {
    int fd = Syscalls.open(dir.toString(), LibC.O_RDONLY() | LibC.O_DIRECTORY() | LibC.O_CLOEXEC());
    if (fd < 0) {
      throw new ErrnoException("open " + dir, -fd);
    }
    return fd;
  }

  /**
   * Moves {@code pid} into this cgroup after the fact, then every process of its session that is
   * still outside (forked before the move), until a pass finds none. Not race-free: a process that
   * left the session before the move is not found.
   */
  void migrate(int pid) throws IOException {
    Path procs = dir.resolve("cgroup.procs");
    writeIgnoringGone(procs, pid);
    if (!mayHaveForked(pid)) {
      return; // the common case: nothing forked before the move, so no scan of /proc
    }
    java.util.Set<Integer> tried = new java.util.HashSet<>();
    for (int pass = 0; pass < 10; pass++) {
      List<Integer> stragglers = sessionMembersOutside(pid);
      stragglers.removeIf(p -> !tried.add(p)); // a process that cannot move (exiting) is tried once
      if (stragglers.isEmpty()) {
        return;
      }
      for (int p : stragglers) {
        writeIgnoringGone(procs, p);
      }
    }
  }

  /**
   * Whether {@code pid}, just moved in, may have forked before the move: it has children, reaped
   * some already (its stat's cminflt, faults of waited-for children, is above 0; every process that
   * ran faulted), runs several threads, or is gone (then nothing is known). Otherwise nothing it
   * forked can be outside, and the session sweep is skipped; a leader that ignores SIGCHLD (its
   * children reaped without accounting) and whose child forked and exited in the instant before the
   * move is the exception, within the race post-spawn placement has anyway.
   */
  private static boolean mayHaveForked(int pid) throws IOException {
    ProcFiles files = new ProcFiles();
    ProcFiles.Stat stat = new ProcFiles.Stat();
    if (!files.readStat(pid, stat) || stat.numThreads != 1 || stat.cminflt != 0) {
      return true;
    }
    PidList children = new PidList();
    return !files.readChildren(pid, pid, children) || children.size() > 0;
  }

  private static void writeIgnoringGone(Path procs, int pid) throws IOException {
    try {
      CgroupFiles.write(procs, Integer.toString(pid));
    } catch (IOException e) {
      if (!String.valueOf(e.getMessage()).contains("No such process")) {
        throw e;
      }
    }
  }

  private List<Integer> sessionMembersOutside(int sid) throws IOException {
    List<Integer> out = new ArrayList<>();
    try (var entries = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      for (Path p : entries) {
        try {
          String stat = CgroupFiles.read(p.resolve("stat"));
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          if (Integer.parseInt(f[3]) != sid || f[0].equals("Z")) { // field 6: session; 3: state
            continue; // a zombie holds no resources and cannot be moved
          }
          if (!CgroupFiles.readLines(p.resolve("cgroup")).contains(procCgroupLine)) {
            out.add(Integer.parseInt(p.getFileName().toString()));
          }
        } catch (IOException | RuntimeException gone) {
          // the process exited while we looked
        }
      }
    }
    return out;
  }

  @Override
  public void kill() throws IOException {
    Path kill = dir.resolve("cgroup.kill");
    if (CgroupFiles.exists(kill)) {
      killed = true;
      CgroupFiles.write(kill, "1");
      return;
    }
    for (String pid : CgroupFiles.readLines(dir.resolve("cgroup.procs"))) {
      if (!pid.isBlank()) {
        Syscalls.kill(Integer.parseInt(pid.trim()), LibC.SIGKILL());
      }
    }
  }

  @Override
  public boolean hasProcesses() throws IOException {
    return !TreeCgroup.read(dir.resolve("cgroup.procs")).isEmpty();
  }

  @Override
  public long cpuUsageNanos() throws IOException {
    return TreeCgroup.keyed(dir.resolve("cpu.stat"), "usage_usec") * 1000;
  }

  @Override
  public boolean oomKilled() throws IOException {
    Path events = dir.resolve("memory.events");
    return CgroupFiles.exists(events) && TreeCgroup.keyed(events, "oom_kill") > 0;
  }

  @Override
  public long peakMemoryBytes() throws IOException {
    Path peak = dir.resolve("memory.peak");
    return CgroupFiles.exists(peak) ? Long.parseLong(TreeCgroup.read(peak)) : -1;
  }

  @Override
  public CpuTimes cpuTimes() throws IOException {
    Path stat = dir.resolve("cpu.stat");
    return new CpuTimes(
        TreeCgroup.keyed(stat, "user_usec") * 1000, TreeCgroup.keyed(stat, "system_usec") * 1000);
  }

  @Override
  public boolean pidsLimitHit() throws IOException {
    Path pids = dir.resolve("pids.events");
    return CgroupFiles.exists(pids) && TreeCgroup.keyed(pids, "max") > 0;
  }

  @Override
  public synchronized void remove() throws IOException {
    if (removed) {
      return;
    }
    TreeCgroup.killAndDrain(this, MAX_WAIT_NANOS);
    CgroupFiles.rmdirIfExists(dir);
    removed = true;
  }

  @Override
  public Path path() {
    return dir;
  }

  @Override
  public String toString() {
    return "v2 cgroup " + dir;
  }
}
