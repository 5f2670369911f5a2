package dev.confine.linux;

import dev.confine.linux.libc.LibC;
import java.io.IOException;
import java.util.Arrays;

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
 *       sample after a member disappeared (whose unseen children are then orphans), and at the
 *       first sample when the leader is already gone, a scan of all of /proc adds the processes of
 *       the leader's session ({@code getsid}, one system call per process): this finds a
 *       double-forked orphan re-parented to init before any sample saw it. The scan stops for good
 *       once it finds the session empty, because the session's id may then be reused by an
 *       unrelated process.
 * </ul>
 *
 * <p>What cannot be seen without a cgroup: a process that left the session (setsid, as a daemon's
 * double fork does) and whose parent exited before any sample saw it. It is neither a descendant of
 * a member any more nor in the session; only a cgroup contains such a process. Between two scans,
 * an orphan that no sample saw yet is not measured (its CPU time is not lost: it is counted once
 * the scan finds it).
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

  private static final long NANOS_PER_SECOND = 1_000_000_000L;

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
  private int[] threadCounts = new int[16];
  private long[] startTimes = new long[16];
  private long[] userTicks = new long[16]; // utime + cutime at last sight
  private long[] systemTicks = new long[16]; // stime + cstime at last sight
  private int[] goneParents = new int[16];
  private long[] goneUser = new long[16];
  private long[] goneSystem = new long[16];

  private boolean started;
  private long leaderStartTime = -1;
  private boolean sessionEnded;
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
  private int inSession;

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
    rssPages = 0;
    userSum = 0;
    systemSum = 0;
    inSession = 0;
    boolean scan;
    samplesSinceScan++;
    if (!started) {
      files.checkAvailable();
      started = true;
      // A session leader, or a reused pid: the check keeps the second out.
      if (files.readStat(leader, stat) && stat.session == leader) {
        leaderStartTime = stat.startTime;
        add(leader);
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
    if (scan && !sessionEnded) {
      scanSession();
      walk(walked);
      samplesSinceScan = 0;
      vanishedSinceScan = false;
      if (inSession == 0) {
        sessionEnded = true;
      }
    }
    long user = ticksToNanos(userSum + lostUserTicks);
    long system = ticksToNanos(systemSum + lostSystemTicks);
    reportedUserNanos = Math.max(reportedUserNanos, user);
    reportedSystemNanos = Math.max(reportedSystemNanos, system);
    return new Sample(
        rssPages * ProcFiles.PAGE_SIZE, reportedUserNanos, reportedSystemNanos, count);
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
    int live = 0;
    int gone = 0;
    for (int i = 0; i < count; i++) {
      int pid = pids[i];
      if (files.readStat(pid, stat) && stat.startTime == startTimes[i]) {
        pids[live] = pid;
        startTimes[live] = startTimes[i];
        record(live);
        index.add(pid);
        live++;
      } else {
        goneParents[gone] = ppids[i];
        goneUser[gone] = userTicks[i];
        goneSystem[gone] = systemTicks[i];
        gone++;
      }
    }
    count = live;
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

  private void scanSession() throws IOException {
    everyone.clear();
    files.listProcesses(everyone);
    for (int i = 0; i < everyone.size(); i++) {
      int pid = everyone.get(i);
      if (index.contains(pid) || files.sessionOf(pid) != leader) {
        continue;
      }
      // Every member of the session started after its leader.
      if (files.readStat(pid, stat)
          && stat.session == leader
          && (leaderStartTime < 0 || stat.startTime >= leaderStartTime)) {
        add(pid);
      }
    }
  }

  /** Appends the process whose stat was just read. */
  private void add(int pid) {
    if (count == pids.length) {
      grow();
    }
    pids[count] = pid;
    startTimes[count] = stat.startTime;
    record(count);
    index.add(pid);
    count++;
  }

  /** Stores the just-read stat at member {@code i} and adds it to the sample's totals. */
  private void record(int i) {
    ProcFiles.Stat s = stat;
    ppids[i] = s.ppid;
    pgrps[i] = s.pgrp;
    threadCounts[i] = s.numThreads;
    userTicks[i] = s.utime + s.cutime;
    systemTicks[i] = s.stime + s.cstime;
    rssPages += Math.max(0, s.rssPages);
    userSum += userTicks[i];
    systemSum += systemTicks[i];
    if (s.session == leader) {
      inSession++;
    }
  }

  private void grow() {
    int n = pids.length * 2;
    pids = Arrays.copyOf(pids, n);
    ppids = Arrays.copyOf(ppids, n);
    pgrps = Arrays.copyOf(pgrps, n);
    threadCounts = Arrays.copyOf(threadCounts, n);
    startTimes = Arrays.copyOf(startTimes, n);
    userTicks = Arrays.copyOf(userTicks, n);
    systemTicks = Arrays.copyOf(systemTicks, n);
    goneParents = Arrays.copyOf(goneParents, n);
    goneUser = Arrays.copyOf(goneUser, n);
    goneSystem = Arrays.copyOf(goneSystem, n);
  }

  private static long ticksToNanos(long ticks) {
    return ticks * NANOS_PER_SECOND / ProcFiles.CLOCK_TICKS_PER_SECOND;
  }

  /**
   * SIGKILLs the members of the last sample that are outside the leader's process group (a {@code
   * kill(-pgid)} misses them). Each is opened as a pidfd and checked to still be the same process
   * before the signal, so a reused pid is never hit.
   */
  @Override
  public void killStrays() {
    for (int i = 0; i < count; i++) {
      if (pgrps[i] == leader) {
        continue;
      }
      int fd = Syscalls.pidfdOpen(pids[i]);
      if (fd < 0) {
        continue; // exited
      }
      try {
        if (files.readStat(pids[i], stat) && stat.startTime == startTimes[i]) {
          Syscalls.pidfdSendSignal(fd, LibC.SIGKILL());
        }
      } catch (IOException e) {
        // Unreadable now: without proof of identity, no signal.
      } finally {
        Syscalls.close(fd);
      }
    }
  }

  /** The members' pids, by open addressing; cleared and refilled at every sample. */
  private static final class PidSet {
    private int[] keys = new int[64]; // 0 = empty (pids are positive)
    private int size;

    void clear() {
      Arrays.fill(keys, 0);
      size = 0;
    }

    boolean contains(int pid) {
      int mask = keys.length - 1;
      for (int i = mix(pid) & mask; ; i = (i + 1) & mask) {
        int k = keys[i];
        if (k == pid) {
          return true;
        }
        if (k == 0) {
          return false;
        }
      }
    }

    void add(int pid) {
      if ((size + 1) * 2 > keys.length) {
        int[] old = keys;
        keys = new int[old.length * 2];
        size = 0;
        for (int k : old) {
          if (k != 0) {
            insert(k);
          }
        }
      }
      insert(pid);
    }

    private void insert(int pid) {
      int mask = keys.length - 1;
      for (int i = mix(pid) & mask; ; i = (i + 1) & mask) {
        if (keys[i] == pid) {
          return;
        }
        if (keys[i] == 0) {
          keys[i] = pid;
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
