package dev.confine.linux.cgroup;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Syscalls;
import dev.confine.linux.tree.TreeLimits;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * A tree's cgroup on v1 hierarchies: one directory in each of the memory, pids, cpu, cpuacct and
 * freezer hierarchies that exist and its caps use (co-mounted controllers share one); a tree
 * without caps gets the freezer alone, which is all tree kill needs. The child is placed race-free
 * by moving the spawning thread into the directories for the spawn ({@link #enterThread}, {@link
 * #leaveThread}): the child starts inside, so nothing it forks can be outside.
 *
 * <p>Except the memory hierarchy: a thread that sits in a memory cgroup is charged there for what
 * the kernel allocates on its behalf (its mappings, page tables), and a small cap then fails the
 * JVM's own allocations. So the spawning thread never enters it; the child is moved into it right
 * after the spawn ({@link #adoptIntoMemory}), every process of the tree found in a hierarchy the
 * child started in with it. What the child allocated before the move (its exec, a few hundred
 * microseconds of a program's start) stays charged to this process's memory cgroup.
 *
 * <p>The files the spawning thread writes (its {@code tasks} moves, the process cap) are opened
 * when the cgroup is taken for a tree ({@link #openPlacementFiles}), by the thread that takes it,
 * and closed once the spawn is over: the spawning thread only writes to open descriptors, so a
 * thread that may not open files (a Landlock domain) can place its spawns too.
 */
final class V1TreeCgroup implements TreeCgroup {
  private static final long MAX_WAIT_NANOS = 5_000_000_000L;
  private static final int JVM_PID = (int) ProcessHandle.current().pid();
  private static final long FREEZE_WAIT_NANOS = 20_000_000L;

  // A pooled cgroup is retired (removed, not reused) after this many trees, or when more than
  // this much memory stays charged to it after its tree (page cache, kernel objects) even after a
  // reclaim.
  static final int MAX_USES = 100;
  static final long MAX_RESIDUAL_BYTES = 4L << 20;

  private final Map<String, Path> dirs; // controller -> directory
  private final List<Path> origins; // the process's own cgroup in each hierarchy used
  private final List<Path> distinctDirs;
  // The directories the spawning thread visits (all but memory's) and its own cgroups to return to.
  private final List<Path> threadDirs;
  private final List<Path> threadOrigins;
  // Opened by the thread that made the cgroup (see the class comment); -1 until then.
  private int[] enterFds = new int[0];
  private int[] leaveFds = new int[0];
  private int pidsMaxFd = -1;
  // Control files opened once and read (from offset 0) or written again and again: a cgroup is
  // reused by many trees, and an open and close per access cost more than the access.
  private final Map<Path, Integer> readFds = new ConcurrentHashMap<>();
  private final Map<Path, Integer> writeFds = new ConcurrentHashMap<>();
  // The process's own cgroups' tasks files, shared by every tree (open as long as the JVM).
  private static final Map<Path, Integer> ORIGIN_TASKS = new ConcurrentHashMap<>();
  private boolean removed;
  private volatile int maxProcesses; // 0: no process cap
  private TreeLimits limits = TreeLimits.NONE; // as written
  // Counters that cannot be reset, as they stood when the current tree got the cgroup.
  private volatile long oomKillsBefore;
  private volatile long pidsMaxEventsBefore;
  private volatile long residualBytes; // charged when the current tree got it
  private int uses;

  private V1TreeCgroup(Map<String, Path> dirs, List<Path> origins, List<Path> distinctDirs) {
    this.dirs = dirs;
    this.origins = origins;
    this.distinctDirs = distinctDirs;
    Path memory = dirs.get("memory");
    List<Path> entered = new ArrayList<>();
    List<Path> left = new ArrayList<>();
    for (int i = 0; i < distinctDirs.size(); i++) {
      // A hierarchy co-mounted with memory is memory's: placed after the spawn with it.
      if (!distinctDirs.get(i).equals(memory)) {
        entered.add(distinctDirs.get(i));
        left.add(origins.get(i));
      }
    }
    this.threadDirs = entered;
    this.threadOrigins = left;
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

  /** The controllers of a tree cgroup without caps: what tree kill needs. */
  static final List<String> TRACKER = List.of("freezer");

  // Without a freezer, a tracker takes the first of these (never memory: no JVM thread may sit in
  // a memory cgroup); membership is then its cgroup.procs, and the kill a SIGKILL of each member.
  private static final List<String> TRACKER_FALLBACK = List.of("cpuacct", "pids", "cpu");

  /**
   * The controllers a tree with {@code limits} needs: moving a task into a v1 cpu cgroup costs up
   * to milliseconds here, so a tree joins only the hierarchies its caps use, plus the freezer (tree
   * kill) and cpuacct (CPU accounting, cheap); a tree without caps joins the freezer alone.
   */
  static List<String> controllersFor(TreeLimits limits) {
    if (!limits.any()) {
      return TRACKER;
    }
    List<String> out = new ArrayList<>();
    if (limits.memoryBytes() > 0) {
      out.add("memory");
    }
    if (limits.maxProcesses() > 0) {
      out.add("pids");
    }
    if (limits.cpuThrottleMillicores() > 0) {
      out.add("cpu");
    }
    out.add("cpuacct");
    out.add("freezer");
    return out;
  }

  /**
   * The hierarchy a tracker uses on this host: the freezer, else the first of cpuacct, pids, cpu;
   * null when there is none of them.
   */
  static String trackerController(Map<String, CgroupLayout.Hierarchy> v1) {
    if (v1.containsKey("freezer")) {
      return "freezer";
    }
    for (String c : TRACKER_FALLBACK) {
      if (v1.containsKey(c)) {
        return c;
      }
    }
    return null;
  }

  static V1TreeCgroup create(Map<String, CgroupLayout.Hierarchy> v1, String name, TreeLimits limits)
      throws IOException {
    List<String> wanted = controllersFor(limits);
    if (!limits.any() && !v1.containsKey("freezer")) {
      String c = trackerController(v1);
      wanted = c == null ? List.of() : List.of(c);
    }
    Map<String, Path> dirs = new LinkedHashMap<>();
    Map<Path, Path> originByDir = new LinkedHashMap<>();
    for (String c : wanted) {
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
    if (cg.threadDirs.isEmpty()) {
      throw new IOException(
          "no v1 hierarchy to hold the tree from its start (freezer, cpuacct, pids or cpu) in "
              + v1.keySet());
    }
    try {
      for (Path d : distinct) {
        CgroupFiles.mkdir(d);
      }
      cg.applyLimits(limits);
      cg.openPlacementFiles();
    } catch (IOException | RuntimeException e) {
      cg.rmdirAll();
      throw e;
    }
    return cg;
  }

  /**
   * Writes the limits that differ from those written before (all of them in a new cgroup). The
   * controllers are those of {@link #controllersFor} the same limits, which a pool keys on.
   */
  private void applyLimits(TreeLimits next) throws IOException {
    Path mem = dirs.get("memory");
    if (next.memoryBytes() > 0 && next.memoryBytes() != limits.memoryBytes()) {
      Path limit = mem.resolve("memory.limit_in_bytes");
      Path memsw = mem.resolve("memory.memsw.limit_in_bytes");
      String value = Long.toString(next.memoryBytes());
      // Memory plus swap at the same limit: the tree cannot swap its way past the cap. It may
      // never be below the memory limit, so it moves first when the limit grows.
      boolean swapFirst = limits.memoryBytes() > 0 && next.memoryBytes() > limits.memoryBytes();
      boolean hasSwap = CgroupFiles.exists(memsw);
      if (swapFirst && hasSwap) {
        write(memsw, value);
      }
      write(limit, value);
      if (!swapFirst && hasSwap) {
        write(memsw, value);
      }
    }
    if (next.maxProcesses() > 0 && next.maxProcesses() != limits.maxProcesses()) {
      maxProcesses = next.maxProcesses();
      write(pidsMax(), Integer.toString(maxProcesses));
    }
    if (next.cpuThrottleMillicores() > 0
        && dirs.containsKey("cpu")
        && next.cpuThrottleMillicores() != limits.cpuThrottleMillicores()) {
      Path cpu = dirs.get("cpu");
      write(cpu.resolve("cpu.cfs_period_us"), "100000");
      write(
          cpu.resolve("cpu.cfs_quota_us"),
          Long.toString(Math.max(1000, next.cpuThrottleMillicores() * 100L)));
    }
    limits = next;
  }

  /**
   * Takes this idle, {@link #recycle recycled} cgroup for a tree with {@code next} limits (the same
   * controllers); false when a limit could not be written (then it is not to be used).
   */
  boolean reuse(TreeLimits next) {
    // What earlier trees left charged counts against the limit: a small cap gets a fresh cgroup.
    if (next.memoryBytes() > 0 && residualBytes > next.memoryBytes() / 8) {
      return false;
    }
    try {
      applyLimits(next);
      openPlacementFiles();
      return true;
    } catch (IOException e) {
      closePlacementFiles();
      return false;
    }
  }

  /**
   * Readies this cgroup, whose tree is over, for another: unless {@code knownEmpty}, kills and
   * waits until it is empty and thaws it; waits until its dead processes are released, resets the
   * peak and CPU counters, and notes the counters that cannot be reset and what stays charged (the
   * kernel's objects and page cache of earlier trees: the next tree's peak is counted above it).
   * Off the exec's path (the janitor's thread).
   *
   * @return whether it can be reused: false after {@link #MAX_USES} trees, when more than {@link
   *     #MAX_RESIDUAL_BYTES} stay charged even after reclaiming (force_empty, ~0.8 ms, so only past
   *     that bound), or when a step failed
   */
  boolean recycle(boolean knownEmpty) {
    try {
      if (!knownEmpty) {
        TreeCgroup.killAndDrain(this, MAX_WAIT_NANOS);
      }
      if (++uses >= MAX_USES) {
        return false;
      }
      for (Path d : distinctDirs) {
        rmdirDescendants(d); // what a member made goes with its tree
      }
      Path pids = dirs.get("pids");
      if (pids != null && !drained(pids.resolve("pids.current"))) {
        return false;
      }
      Path freezer = dirs.get("freezer");
      if (freezer != null && !knownEmpty) {
        write(freezer.resolve("freezer.state"), "THAWED"); // a kill thaws; this makes sure
      }
      Path mem = dirs.get("memory");
      if (mem != null) {
        residualBytes = Long.parseLong(read(mem.resolve("memory.usage_in_bytes")));
        if (residualBytes > MAX_RESIDUAL_BYTES) {
          // Rarely: reclaimed (~0.8 ms), and retired if that does not bring it down.
          write(mem.resolve("memory.force_empty"), "1");
          residualBytes = Long.parseLong(read(mem.resolve("memory.usage_in_bytes")));
          if (residualBytes > MAX_RESIDUAL_BYTES) {
            return false;
          }
        }
        write(mem.resolve("memory.max_usage_in_bytes"), "0"); // resets it to the usage now
        oomKillsBefore = keyed(mem.resolve("memory.oom_control"), "oom_kill");
      }
      Path acct = dirs.get("cpuacct");
      if (acct != null) {
        write(acct.resolve("cpuacct.usage"), "0");
      }
      if (pids != null) {
        pidsMaxEventsBefore = keyed(pids.resolve("pids.events"), "max");
      }
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /**
   * Counts a use of this cgroup, whose tree is over and was seen empty, and says whether it can
   * serve the next tree as it is: one that only tracks (the freezer alone: no counter to reset,
   * nothing charged), under {@link #MAX_USES}. Its releaser then keeps it idle at once, so that
   * back-to-back execs take the same cgroup with its files open, instead of a new one made while
   * the janitor readies the last.
   */
  boolean reusableAsIs(boolean knownEmpty) {
    if (!knownEmpty
        || limits.any()
        || dirs.containsKey("memory")
        || dirs.containsKey("pids")
        || dirs.containsKey("cpuacct")
        || hasDescendants()) {
      return false;
    }
    return ++uses < MAX_USES;
  }

  /** Whether a member made cgroups beneath this one (see killListed); true when unsure. */
  private boolean hasDescendants() {
    try {
      for (Path d : distinctDirs) {
        if (withDescendants(d).size() > 1) {
          return true;
        }
      }
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  // Dead processes stay charged to pids.current until they are reaped (orphans by init, which can
  // be slow): a reused cgroup must start at zero, or a tight process cap would refuse the child.
  private static final long PIDS_RELEASE_WAIT_NANOS = 200_000_000L;

  private boolean drained(Path pidsCurrent) throws IOException {
    long deadline = System.nanoTime() + PIDS_RELEASE_WAIT_NANOS;
    while (Long.parseLong(read(pidsCurrent)) > 0) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      LockSupport.parkNanos(1_000_000);
    }
    return true;
  }

  /** The limits last written. */
  TreeLimits limits() {
    return limits;
  }

  private String read(Path file) throws IOException {
    return CgroupFiles.read(fd(readFds, file, false), file).trim();
  }

  private void write(Path file, String value) throws IOException {
    CgroupFiles.write(fd(writeFds, file, true), file, value);
  }

  private long keyed(Path file, String key) throws IOException {
    return TreeCgroup.keyedValue(CgroupFiles.read(fd(readFds, file, false), file), key);
  }

  private static int fd(Map<Path, Integer> fds, Path file, boolean forWriting) throws IOException {
    Integer fd = fds.get(file);
    if (fd != null) {
      return fd;
    }
    int opened = CgroupFiles.open(file, forWriting);
    Integer raced = fds.putIfAbsent(file, opened);
    if (raced != null) {
      Syscalls.close(opened);
      return raced;
    }
    return opened;
  }

  private void closeFiles() {
    closePlacementFiles();
    for (Map<Path, Integer> fds : List.of(readFds, writeFds)) {
      for (Integer fd : fds.values()) {
        Syscalls.close(fd);
      }
      fds.clear();
    }
  }

  /**
   * Opens the files {@link #enterThread} and {@link #leaveThread} write, for one spawn: the {@code
   * tasks} file of each directory the spawning thread visits, this process's own {@code tasks} in
   * each of those hierarchies (shared by every tree, open as long as the JVM) and {@code pids.max}.
   * {@link #closePlacementFiles} closes them once the spawn is over, so that a live tree (an idle
   * session) holds no descriptor of its cgroup.
   */
  void openPlacementFiles() throws IOException {
    closePlacementFiles();
    int[] enter = new int[threadDirs.size()];
    int[] leave = new int[threadOrigins.size()];
    try {
      for (int i = 0; i < enter.length; i++) {
        enter[i] = -1;
      }
      for (int i = 0; i < enter.length; i++) {
        enter[i] = CgroupFiles.open(threadDirs.get(i).resolve("tasks"), true);
        leave[i] = fd(ORIGIN_TASKS, threadOrigins.get(i).resolve("tasks"), true);
      }
      if (dirs.containsKey("pids")) {
        pidsMaxFd = CgroupFiles.open(pidsMax(), true);
      }
    } finally {
      enterFds = enter;
      leaveFds = leave;
    }
  }

  /** Closes what {@link #openPlacementFiles} opened; idempotent. */
  void closePlacementFiles() {
    for (int fd : enterFds) {
      if (fd >= 0) {
        Syscalls.close(fd);
      }
    }
    enterFds = new int[0];
    leaveFds = new int[0];
    if (pidsMaxFd >= 0) {
      Syscalls.close(pidsMaxFd);
      pidsMaxFd = -1;
    }
  }

  /**
   * Moves thread {@code tid} of this process into every directory of this cgroup but the memory
   * one, writing only to descriptors opened before ({@link #openPlacementFiles}): any thread may
   * call it, for itself or for another thread of this process.
   */
  void enterThread(int tid) throws IOException {
    if (maxProcesses > 0) {
      // The spawning thread takes one slot of pids.max while it sits inside; without one more,
      // a cap of 1 could not even start the child.
      CgroupFiles.write(pidsMaxFd, pidsMax(), Integer.toString(maxProcesses + 1));
    }
    String value = Integer.toString(tid);
    for (int i = 0; i < enterFds.length; i++) {
      CgroupFiles.write(enterFds[i], threadDirs.get(i), value);
    }
  }

  /** Moves thread {@code tid} back to this process's own cgroups, as {@link #enterThread}. */
  void leaveThread(int tid) throws IOException {
    if (maxProcesses > 0) {
      // Restored while the thread is still inside: the tree never gets the extra slot for itself.
      CgroupFiles.write(pidsMaxFd, pidsMax(), Integer.toString(maxProcesses));
    }
    String value = Integer.toString(tid);
    for (int i = 0; i < leaveFds.length; i++) {
      CgroupFiles.write(leaveFds[i], threadOrigins.get(i), value);
    }
  }

  /** Whether the child must be moved into a memory cgroup after its spawn. */
  boolean hasMemory() {
    return dirs.containsKey("memory");
  }

  private static final int MAX_ADOPT_PASSES = 8;

  /**
   * Moves the just-spawned tree of {@code leaderPid} into this cgroup's memory directory: the
   * leader, then every process listed in a hierarchy the tree started in (it may have forked before
   * the move), until a listing shows nothing not moved yet; a process forked after its parent moved
   * is inside already. A tree that forks faster than it is moved is frozen (where the freezer is)
   * and moved whole. Runs on the caller's thread, which opens the listing afresh.
   *
   * @throws IOException when the tree could not be moved (the caller kills it)
   */
  void adoptIntoMemory(int leaderPid) throws IOException {
    Path procs = dirs.get("memory").resolve("cgroup.procs");
    int procsFd = fd(writeFds, procs, true);
    java.util.Set<Integer> moved = new java.util.HashSet<>();
    moveIgnoringGone(procsFd, procs, leaderPid);
    moved.add(leaderPid);
    Path listing = procsDir().resolve("cgroup.procs");
    for (int pass = 0; pass < MAX_ADOPT_PASSES; pass++) {
      boolean any = false;
      for (int pid : listed(listing)) {
        if (moved.add(pid)) {
          moveIgnoringGone(procsFd, procs, pid);
          any = true;
        }
      }
      if (!any) {
        return;
      }
    }
    Path freezer = dirs.get("freezer");
    if (freezer == null) {
      throw new IOException("the tree kept forking while it was moved into " + procs);
    }
    Path state = freezer.resolve("freezer.state");
    write(state, "FROZEN");
    try {
      awaitFrozen(state);
      for (int pid : listed(listing)) {
        moveIgnoringGone(procsFd, procs, pid);
      }
    } finally {
      write(state, "THAWED");
    }
  }

  private static List<Integer> listed(Path procs) throws IOException {
    List<Integer> out = new ArrayList<>();
    // Opened afresh: a v1 pid list is kept with its open file (see hasProcesses).
    for (String line : CgroupFiles.readLines(procs)) {
      if (!line.isBlank()) {
        int pid = Integer.parseInt(line.trim());
        if (pid != JVM_PID) {
          out.add(pid);
        }
      }
    }
    return out;
  }

  private static void moveIgnoringGone(int fd, Path procs, int pid) throws IOException {
    try {
      CgroupFiles.write(fd, procs, Integer.toString(pid));
    } catch (IOException e) {
      // Exited already (or a zombie, which holds no memory): nothing to move.
      if (!String.valueOf(e.getMessage()).contains("No such process")) {
        throw e;
      }
    }
  }

  private void awaitFrozen(Path state) throws IOException {
    long deadline = System.nanoTime() + FREEZE_WAIT_NANOS;
    while (!read(state).equals("FROZEN") && System.nanoTime() < deadline) {
      LockSupport.parkNanos(50_000);
    }
  }

  private Path pidsMax() {
    return dirs.get("pids").resolve("pids.max");
  }

  // Where the tree's membership is listed: a hierarchy it started in (not memory, joined later).
  private Path procsDir() {
    Path f = dirs.get("freezer");
    return f != null ? f : threadDirs.isEmpty() ? distinctDirs.get(0) : threadDirs.get(0);
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
    write(state, "FROZEN");
    awaitFrozen(state);
    try {
      killListed(freezer);
    } finally {
      write(state, "THAWED");
    }
  }

  /**
   * SIGKILLs every member of {@code dir} and of every cgroup beneath it: v1 lists only a cgroup's
   * own members, and a member that can write the cgroup filesystem may have made a cgroup inside
   * its tree's and moved into it (as a JVM running Confine inside an exec does with its own trees).
   */
  private static void killListed(Path dir) throws IOException {
    for (Path d : withDescendants(dir)) {
      for (String line : readProcs(d)) {
        if (line.isBlank()) {
          continue;
        }
        int pid = Integer.parseInt(line.trim());
        // A thread of this JVM sits in the cgroup while it spawns into it (and would stay if
        // moving it back failed): its process is listed, and must never be the one killed.
        if (pid != JVM_PID) {
          Syscalls.kill(pid, LibC.SIGKILL());
        }
      }
    }
  }

  /** The members listed in {@code dir}; none when it was removed meanwhile. */
  private static List<String> readProcs(Path dir) throws IOException {
    try {
      return CgroupFiles.readLines(dir.resolve("cgroup.procs"));
    } catch (NoSuchFileException e) {
      return List.of();
    }
  }

  /** {@code dir} and every cgroup beneath it, each parent before its children. */
  static List<Path> withDescendants(Path dir) throws IOException {
    List<Path> out = new ArrayList<>();
    out.add(dir);
    if (!hasSubdirectories(dir)) {
      return out; // the usual case, on every exec's end: one stat, no listing
    }
    for (int i = 0; i < out.size(); i++) {
      try (DirectoryStream<Path> children =
          Files.newDirectoryStream(out.get(i), Files::isDirectory)) {
        for (Path c : children) {
          out.add(c);
        }
      } catch (NoSuchFileException e) {
        // removed meanwhile
      }
    }
    return out;
  }

  /**
   * Whether {@code dir} has a cgroup beneath it: kernfs keeps a directory's link count at 2 plus
   * its subdirectories, so one stat answers without listing it (true when it cannot be read).
   */
  private static boolean hasSubdirectories(Path dir) {
    try {
      return ((Number) Files.getAttribute(dir, "unix:nlink")).intValue() != 2;
    } catch (NoSuchFileException e) {
      return false;
    } catch (IOException | RuntimeException e) {
      return true;
    }
  }

  /** Removes every cgroup beneath {@code dir}, children first (they must be empty). */
  private static void rmdirDescendants(Path dir) throws IOException {
    List<Path> all = withDescendants(dir);
    for (int i = all.size() - 1; i > 0; i--) {
      try {
        CgroupFiles.rmdirIfExists(all.get(i));
      } catch (NoSuchFileException ignored) {
        // already gone
      }
    }
  }

  @Override
  public boolean hasProcesses() throws IOException {
    Path pids = dirs.get("pids");
    if (pids != null && Long.parseLong(read(pids.resolve("pids.current"))) == 0) {
      return false; // nothing alive or dead in it: cheaper than listing it
    }
    // Opened afresh each time: a v1 pid list is kept with its open file and served again for a
    // second, so a re-read of an open cgroup.procs would show processes long gone. The cgroups
    // beneath count too (see killListed).
    for (Path d : withDescendants(procsDir())) {
      for (String line : readProcs(d)) {
        if (!line.isBlank() && Integer.parseInt(line.trim()) != JVM_PID) {
          return true;
        }
      }
    }
    return false;
  }

  @Override
  public long cpuUsageNanos() throws IOException {
    Path acct = dirs.get("cpuacct");
    return acct == null ? -1 : Long.parseLong(read(acct.resolve("cpuacct.usage")));
  }

  @Override
  public boolean oomKilled() throws IOException {
    Path mem = dirs.get("memory");
    return mem != null && keyed(mem.resolve("memory.oom_control"), "oom_kill") > oomKillsBefore;
  }

  @Override
  public long peakMemoryBytes() throws IOException {
    Path mem = dirs.get("memory");
    // What earlier trees left charged (at most MAX_RESIDUAL_BYTES) is not this tree's peak.
    return mem == null
        ? -1
        : Math.max(
            0, Long.parseLong(read(mem.resolve("memory.max_usage_in_bytes"))) - residualBytes);
  }

  @Override
  public CpuTimes cpuTimes() throws IOException {
    Path acct = dirs.get("cpuacct");
    if (acct == null || !CgroupFiles.exists(acct.resolve("cpuacct.usage_user"))) {
      return CpuTimes.UNMEASURED;
    }
    return new CpuTimes(
        Long.parseLong(read(acct.resolve("cpuacct.usage_user"))),
        Long.parseLong(read(acct.resolve("cpuacct.usage_sys"))));
  }

  @Override
  public boolean pidsLimitHit() throws IOException {
    Path pids = dirs.get("pids");
    return pids != null && keyed(pids.resolve("pids.events"), "max") > pidsMaxEventsBefore;
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
    closeFiles();
    IOException first = null;
    for (Path d : distinctDirs) {
      try {
        rmdirDescendants(d); // made by a member (see killListed): they keep d from going
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
