package dev.confine.linux.proc;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Syscalls;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * Measures one process tree from /proc: the resident memory and CPU time of a leader spawned with
 * its own session (pid = process group id = session id) and of everything it started.
 *
 * <p>Membership, refreshed at every {@link #sample()}:
 *
 * <ul>
 *   <li>the leader, and every process found by walking {@code /proc/<pid>/task/<tid>/children} from
 *       the known members;
 *   <li>a process once seen stays a member while it lives, even after its parent dies and it is
 *       re-parented outside the tree; it is identified by pid and start time, so a reused pid
 *       cannot stand in for it;
 *   <li>every {@value #DEFAULT_SCAN_EVERY}th sample, at most every {@value #MIN_SCAN_SPACING}th
 *       sample after a member disappeared (whose unseen children are then orphans), at the first
 *       sample when the leader is already gone, and at every {@link #lastLook()}, a scan of all of
 *       /proc adds the processes of the tree's sessions ({@code getsid}, one system call per
 *       process): the leader's session, and the session of every member that made one (setsid, as a
 *       daemon does). This finds a double-forked orphan re-parented to init before any sample saw
 *       it, as long as it stayed in a session the tree is known to have. A session is scanned only
 *       by processes that started after its leader, and no more once a scan finds it empty, because
 *       its id may then be reused by an unrelated process.
 * </ul>
 *
 * <p>What cannot be seen without a cgroup: a process that left every known session (setsid, as a
 * daemon's double fork does) and whose parent exited before any sample saw it: it is neither a
 * descendant of a member any more nor in a known session; only a cgroup contains such a process.
 * Between two scans, an orphan that no sample saw yet is not measured (its CPU time is not lost: it
 * is counted once the scan finds it).
 *
 * <p>The figures: resident memory is the sum of the members' RSS (stat field 24 × page size), so
 * pages shared between members (libraries, copy-on-write after fork) count once per member, as in
 * {@code ps}. CPU time is the sum of the members' own user and system time (fields 14, 15) plus
 * what they collected from children they reaped (fields 16, 17), plus the last-seen time of members
 * that were reaped by a process outside the tree (the leader itself, reaped by this JVM; orphans
 * reaped by init). It has the kernel's clock-tick resolution ({@code sysconf(_SC_CLK_TCK)}, 10 ms
 * on x86-64) and never decreases from one sample to the next: a member reaped between two reads in
 * the same sample is counted at the next one.
 *
 * <p>Not thread-safe: one thread at a time samples (the sampler's buffers are reused, so a sample
 * allocates almost nothing).
 */
public final class ProcSampler implements TreeSampler {
  /** By default a full /proc scan runs every this many samples. */
  public static final int DEFAULT_SCAN_EVERY = 20;

  /** The fewest samples between two scans triggered by a member's disappearance. */
  static final int MIN_SCAN_SPACING = 4;

  /** At most this many sessions are tracked; the sessions made beyond it are not scanned. */
  static final int MAX_SESSIONS = 1024;

  private static final long NANOS_PER_SECOND = 1_000_000_000L;
  private static final int JVM_PID = (int) ProcessHandle.current().pid();
  // How long a kill waits for the processes it stopped to be stopped (a task in the kernel stops
  // when it returns to user space), per round, and how many rounds of stop-and-look it makes.
  private static final long STOP_WAIT_NANOS = 100_000_000L;
  private static final long DEATH_WAIT_NANOS = 1_000_000_000L;
  private static final int MAX_KILL_ROUNDS = 64;
  private static final int MAX_KILL_CYCLES = 10;

  /**
   * One measurement of a tree.
   *
   * @param rssBytes the members' summed resident memory
   * @param cpuUserNanos user CPU time of the tree so far, reaped members included
   * @param cpuSystemNanos system CPU time of the tree so far, reaped members included
   * @param members the processes alive in the tree (zombies included)
   */
  public record Sample(long rssBytes, long cpuUserNanos, long cpuSystemNanos, int members) {
    /** User plus system CPU time. */
    public long cpuNanos() {
      return cpuUserNanos + cpuSystemNanos;
    }
  }

  private final int leader;
  private final int scanEvery;
  private final ProcFiles files = new ProcFiles();
  private final ProcFiles.Stat stat = new ProcFiles.Stat();
  private final PidList children = new PidList();
  private final PidList threads = new PidList();
  private final PidList everyone = new PidList();
  private final PidSet index = new PidSet();

  // The members, in discovery order: a parent is read before the children found through it, so a
  // child reaped between the two reads is missed for one sample rather than counted twice.
  private int count;
  private int[] pids = new int[16];
  private int[] ppids = new int[16];
  private int[] pgrps = new int[16];
  private int[] sids = new int[16];
  private int[] threadCounts = new int[16];
  private char[] states = new char[16];
  private long[] startTimes = new long[16];
  private long[] userTicks = new long[16]; // utime + cutime at last sight
  private long[] systemTicks = new long[16]; // stime + cstime at last sight
  private boolean[] stopped = new boolean[16]; // sent SIGSTOP by killTree
  private int[] goneParents = new int[16];
  private long[] goneUser = new long[16];
  private long[] goneSystem = new long[16];

  // The sessions of the tree: the leader's (slot 0), and each made by a member (its pid, started
  // when that member did).
  private final PidSet sessionIndex = new PidSet();
  private int sessionCount;
  private int[] sessionIds = new int[4];
  private long[] sessionStarts = new long[4]; // -1: not known (the leader was never seen)
  private boolean[] sessionEnded = new boolean[4];
  private int[] sessionMembers = new int[4]; // members in it at the sample in progress

  private boolean started;
  private int samplesSinceScan;
  private boolean vanishedSinceScan;
  private long lostUserTicks;
  private long lostSystemTicks;
  private long reportedUserNanos;
  private long reportedSystemNanos;

  // Totals of the sample in progress.
  private long rssPages;
  private long userSum;
  private long systemSum;
  private int live;

  /** A sampler for the tree of {@code leaderPid}, a session leader; nothing is read yet. */
  public ProcSampler(int leaderPid) {
    this(leaderPid, DEFAULT_SCAN_EVERY);
  }

  /**
   * A sampler that scans /proc every {@code scanEvery} samples; 0 never scans (for tests that show
   * what the children walk alone finds).
   */
  ProcSampler(int leaderPid, int scanEvery) {
    if (leaderPid <= 0) {
      throw new IllegalArgumentException("leader pid must be positive: " + leaderPid);
    }
    if (scanEvery < 0) {
      throw new IllegalArgumentException("scanEvery must not be negative: " + scanEvery);
    }
    this.leader = leaderPid;
    this.scanEvery = scanEvery;
  }

  /** The leader's pid, which is also the tree's process group and session id. */
  public int leaderPid() {
    return leader;
  }

  /**
   * Refreshes the membership and measures the tree. A tree whose processes have all exited samples
   * as zero members and zero memory, with the CPU time it used.
   *
   * @throws IOException when /proc cannot be read (not mounted, no {@code children} files in this
   *     kernel, a read failing for another reason than the process having exited)
   */
  @Override
  public Sample sample() throws IOException {
    return sample(false);
  }

  /**
   * A sample with a scan of the tree's sessions, whatever the schedule: the last look at a tree
   * whose leader has exited, before the end of its exec.
   *
   * @return whether any process of the tree is alive (zombies are not)
   */
  @Override
  public boolean lastLook() throws IOException {
    sample(true);
    return live > 0;
  }

  private Sample sample(boolean forceScan) throws IOException {
    beginTotals();
    boolean scan;
    samplesSinceScan++;
    if (!started) {
      files.checkAvailable();
      started = true;
      // A session leader, or a reused pid: the check keeps the second out.
      if (files.readStat(leader, stat) && stat.session == leader) {
        registerSession(leader, stat.startTime);
        add(leader);
      } else {
        registerSession(leader, -1);
      }
      // A leader still there has had no time to orphan much; the regular scans will look. A leader
      // already gone may have left orphans that nothing else leads to.
      scan = scanEvery > 0 && count == 0;
    } else {
      refresh();
      scan =
          scanEvery > 0
              && (samplesSinceScan >= scanEvery
                  || (vanishedSinceScan && samplesSinceScan >= MIN_SCAN_SPACING));
    }
    int walked = walk(0);
    if ((scan || (forceScan && scanEvery > 0)) && anySessionOpen()) {
      scanSessions();
      walk(walked);
      samplesSinceScan = 0;
      vanishedSinceScan = false;
      for (int i = 0; i < sessionCount; i++) {
        if (sessionMembers[i] == 0) {
          sessionEnded[i] = true;
        }
      }
    }
    long user = ticksToNanos(userSum + lostUserTicks);
    long system = ticksToNanos(systemSum + lostSystemTicks);
    reportedUserNanos = Math.max(reportedUserNanos, user);
    reportedSystemNanos = Math.max(reportedSystemNanos, system);
    return new Sample(
        rssPages * ProcFiles.PAGE_SIZE, reportedUserNanos, reportedSystemNanos, count);
  }

  private void beginTotals() {
    rssPages = 0;
    userSum = 0;
    systemSum = 0;
    live = 0;
    Arrays.fill(sessionMembers, 0, sessionCount, 0);
  }

  /** Whether {@code pid} was a member at the last sample (tests). */
  boolean isMember(int pid) {
    for (int i = 0; i < count; i++) {
      if (pids[i] == pid) {
        return true;
      }
    }
    return false;
  }

  /** Re-reads every member, dropping those that exited or whose pid now names another process. */
  private void refresh() throws IOException {
    index.clear();
    int kept = 0;
    int gone = 0;
    for (int i = 0; i < count; i++) {
      int pid = pids[i];
      if (files.readStat(pid, stat) && stat.startTime == startTimes[i]) {
        pids[kept] = pid;
        startTimes[kept] = startTimes[i];
        stopped[kept] = stopped[i];
        record(kept);
        index.add(pid);
        kept++;
      } else {
        goneParents[gone] = ppids[i];
        goneUser[gone] = userTicks[i];
        goneSystem[gone] = systemTicks[i];
        gone++;
      }
    }
    count = kept;
    for (int g = 0; g < gone; g++) {
      // Reaped by a live member: its time is in that member's cutime/cstime already. Reaped by
      // anyone else (the JVM reaps the leader, init the orphans): keep its last-seen time.
      if (!index.contains(goneParents[g])) {
        lostUserTicks += goneUser[g];
        lostSystemTicks += goneSystem[g];
      }
    }
    if (gone > 0) {
      vanishedSinceScan = true;
    }
  }

  /** Walks the children files of members {@code from..count}, adding what it finds; to count. */
  private int walk(int from) throws IOException {
    int i = from;
    for (; i < count; i++) {
      int pid = pids[i];
      if (threadCounts[i] <= 1 && addChildren(pid, pid)) {
        continue;
      }
      // Several threads (each has its own children), or the main thread is gone.
      threads.clear();
      if (files.listThreads(pid, threads)) {
        for (int t = 0; t < threads.size(); t++) {
          addChildren(pid, threads.get(t));
        }
      }
    }
    return i;
  }

  private boolean addChildren(int pid, int tid) throws IOException {
    children.clear();
    if (!files.readChildren(pid, tid, children)) {
      return false;
    }
    for (int c = 0; c < children.size(); c++) {
      int child = children.get(c);
      if (!index.contains(child) && files.readStat(child, stat)) {
        add(child);
      }
    }
    return true;
  }

  private boolean anySessionOpen() {
    for (int i = 0; i < sessionCount; i++) {
      if (!sessionEnded[i]) {
        return true;
      }
    }
    return false;
  }

  /** Adds every process of /proc in an open session of the tree that is not a member yet. */
  private void scanSessions() throws IOException {
    everyone.clear();
    files.listProcesses(everyone);
    for (int i = 0; i < everyone.size(); i++) {
      int pid = everyone.get(i);
      if (index.contains(pid) || pid == JVM_PID) {
        continue;
      }
      int sid = files.sessionOf(pid);
      int s = sid > 0 ? sessionIndex.indexOf(sid) : -1;
      if (s < 0 || sessionEnded[s]) {
        continue;
      }
      // Every member of a session started after its leader.
      if (files.readStat(pid, stat)
          && stat.session == sid
          && (sessionStarts[s] < 0 || stat.startTime >= sessionStarts[s])) {
        add(pid);
      }
    }
  }

  private void registerSession(int sid, long startTime) {
    if (sessionIndex.indexOf(sid) >= 0 || sessionCount == MAX_SESSIONS) {
      return;
    }
    if (sessionCount == sessionIds.length) {
      int n = sessionCount * 2;
      sessionIds = Arrays.copyOf(sessionIds, n);
      sessionStarts = Arrays.copyOf(sessionStarts, n);
      sessionEnded = Arrays.copyOf(sessionEnded, n);
      sessionMembers = Arrays.copyOf(sessionMembers, n);
    }
    sessionIds[sessionCount] = sid;
    sessionStarts[sessionCount] = startTime;
    sessionEnded[sessionCount] = false;
    sessionMembers[sessionCount] = 0;
    sessionIndex.put(sid, sessionCount);
    sessionCount++;
  }

  /** Appends the process whose stat was just read. */
  private void add(int pid) {
    if (count == pids.length) {
      grow();
    }
    pids[count] = pid;
    startTimes[count] = stat.startTime;
    stopped[count] = false;
    record(count);
    index.add(pid);
    count++;
  }

  /** Stores the just-read stat at member {@code i} and adds it to the sample's totals. */
  private void record(int i) {
    ProcFiles.Stat s = stat;
    if (s.session == pids[i]) {
      // A member that made its own session (setsid), maybe since the last sample.
      registerSession(pids[i], startTimes[i]);
    }
    ppids[i] = s.ppid;
    pgrps[i] = s.pgrp;
    sids[i] = s.session;
    threadCounts[i] = s.numThreads;
    states[i] = s.state;
    userTicks[i] = s.utime + s.cutime;
    systemTicks[i] = s.stime + s.cstime;
    rssPages += Math.max(0, s.rssPages);
    userSum += userTicks[i];
    systemSum += systemTicks[i];
    if (!dead(s.state)) {
      live++;
    }
    int session = sessionIndex.indexOf(s.session);
    if (session >= 0) {
      sessionMembers[session]++;
    }
  }

  private static boolean dead(char state) {
    return state == 'Z' || state == 'X' || state == 'x';
  }

  private void grow() {
    int n = pids.length * 2;
    pids = Arrays.copyOf(pids, n);
    ppids = Arrays.copyOf(ppids, n);
    pgrps = Arrays.copyOf(pgrps, n);
    sids = Arrays.copyOf(sids, n);
    threadCounts = Arrays.copyOf(threadCounts, n);
    states = Arrays.copyOf(states, n);
    startTimes = Arrays.copyOf(startTimes, n);
    userTicks = Arrays.copyOf(userTicks, n);
    systemTicks = Arrays.copyOf(systemTicks, n);
    stopped = Arrays.copyOf(stopped, n);
    goneParents = Arrays.copyOf(goneParents, n);
    goneUser = Arrays.copyOf(goneUser, n);
    goneSystem = Arrays.copyOf(goneSystem, n);
  }

  private static long ticksToNanos(long ticks) {
    return ticks * NANOS_PER_SECOND / ProcFiles.CLOCK_TICKS_PER_SECOND;
  }

  /**
   * Kills every process of the tree that can be found, the way a v1 freezer does: first stops them
   * (SIGSTOP to the leader's group and to each member; a stopped process forks no more, and a fork
   * already under way shows its child in the stopped parent's children file), then looks again
   * (children walk and session scan) and stops what it finds, until a look finds nothing new, then
   * SIGKILLs them all, waits until they are dead and looks once more (a process the scheduler kept
   * from stopping may have finished a fork), again until that look finds nothing alive. Each member
   * is opened as a pidfd and checked to still be the same process before any signal, so a reused
   * pid is never hit.
   */
  @Override
  public void killTree() throws IOException {
    if (!started) {
      sample(false);
    }
    for (int cycle = 0; cycle < MAX_KILL_CYCLES; cycle++) {
      Syscalls.kill(-leader, LibC.SIGSTOP());
      try {
        stopAndLook();
      } finally {
        Syscalls.kill(-leader, LibC.SIGKILL());
        for (int i = 0; i < count; i++) {
          if (!dead(states[i])) {
            signal(i, LibC.SIGKILL());
          }
        }
      }
      awaitDead();
      look();
      if (live == 0) {
        return;
      }
    }
  }

  private void stopAndLook() throws IOException {
    for (int round = 0; round < MAX_KILL_ROUNDS; round++) {
      boolean fresh = false;
      for (int i = 0; i < count; i++) {
        if (!stopped[i] && !dead(states[i])) {
          signal(i, LibC.SIGSTOP());
          stopped[i] = true;
          fresh = true;
        }
      }
      if (!fresh && round > 0) {
        return;
      }
      awaitState(true);
      look();
    }
  }

  /** Refreshes the membership: the children walk, and a scan of the tree's open sessions. */
  private void look() throws IOException {
    beginTotals();
    refresh();
    int walked = walk(0);
    if (scanEvery > 0 && anySessionOpen()) {
      scanSessions();
      walk(walked);
    }
  }

  private void awaitDead() throws IOException {
    awaitState(false);
  }

  /**
   * Waits (bounded) until every member is stopped (those sent SIGSTOP, {@code stop}) or dead (every
   * member, after SIGKILL).
   */
  private void awaitState(boolean stop) throws IOException {
    long deadline = System.nanoTime() + (stop ? STOP_WAIT_NANOS : DEATH_WAIT_NANOS);
    for (int i = 0; i < count; i++) {
      while (!stop || stopped[i]) {
        if (!files.readStat(pids[i], stat) || stat.startTime != startTimes[i]) {
          break; // gone
        }
        char st = stat.state;
        if (dead(st) || (stop && (st == 'T' || st == 't')) || System.nanoTime() - deadline > 0) {
          break;
        }
        LockSupport.parkNanos(50_000);
      }
    }
  }

  /** Sends {@code signal} to member {@code i} if it is still the process first seen there. */
  private void signal(int i, int signal) {
    int pid = pids[i];
    if (pid == JVM_PID || pid <= 1) {
      return;
    }
    int fd = Syscalls.pidfdOpen(pid);
    if (fd < 0) {
      return; // exited
    }
    try {
      if (files.readStat(pid, stat) && stat.startTime == startTimes[i]) {
        Syscalls.pidfdSendSignal(fd, signal);
      }
    } catch (IOException e) {
      // Unreadable now: without proof of identity, no signal.
    } finally {
      Syscalls.close(fd);
    }
  }

  /** Pids by open addressing, each with a small value; cleared and refilled as needed. */
  private static final class PidSet {
    private int[] keys = new int[64]; // 0 = empty (pids are positive)
    private int[] values = new int[64];
    private int size;

    void clear() {
      Arrays.fill(keys, 0);
      size = 0;
    }

    boolean contains(int pid) {
      return indexOf(pid) >= 0;
    }

    /** The value stored with {@code pid}, or -1. */
    int indexOf(int pid) {
      int mask = keys.length - 1;
      for (int i = mix(pid) & mask; ; i = (i + 1) & mask) {
        int k = keys[i];
        if (k == pid) {
          return values[i];
        }
        if (k == 0) {
          return -1;
        }
      }
    }

    void add(int pid) {
      put(pid, 0);
    }

    void put(int pid, int value) {
      if ((size + 1) * 2 > keys.length) {
        int[] oldKeys = keys;
        int[] oldValues = values;
        keys = new int[oldKeys.length * 2];
        values = new int[oldKeys.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
          if (oldKeys[i] != 0) {
            insert(oldKeys[i], oldValues[i]);
          }
        }
      }
      insert(pid, value);
    }

    private void insert(int pid, int value) {
      int mask = keys.length - 1;
      for (int i = mix(pid) & mask; ; i = (i + 1) & mask) {
        if (keys[i] == pid) {
          values[i] = value;
          return;
        }
        if (keys[i] == 0) {
          keys[i] = pid;
          values[i] = value;
          size++;
          return;
        }
      }
    }

    private static int mix(int pid) {
      return pid * 0x9E3779B9;
    }
  }
}
