package dev.confine.linux.cgroup;

import dev.confine.linux.tree.TreeUsage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * The cgroup (one directory per hierarchy used) that holds one process tree, with its caps written.
 * Made (or taken idle) by {@link Cgroups#create}, handed back by {@link Cgroups#release}, removed
 * by {@link #remove()}.
 */
public sealed interface TreeCgroup permits V1TreeCgroup, V2TreeCgroup {
  /** Kills every process in the cgroup, including those that left the process group. */
  void kill() throws IOException;

  /** Whether any process is still in the cgroup. */
  boolean hasProcesses() throws IOException;

  /** The CPU time the tree has used so far, in nanoseconds. */
  long cpuUsageNanos() throws IOException;

  /** Whether the kernel's OOM killer killed a process of the tree. */
  boolean oomKilled() throws IOException;

  /**
   * What the tree consumed, as far as this cgroup measures it: best effort, so what cannot be read
   * stays unmeasured.
   */
  default TreeUsage usage() {
    long peak = -1;
    CpuTimes cpu = CpuTimes.UNMEASURED;
    boolean pidsHit = false;
    try {
      peak = peakMemoryBytes();
      cpu = cpuTimes();
      pidsHit = pidsLimitHit();
    } catch (IOException | NumberFormatException e) {
      // what could not be read stays unmeasured
    }
    return new TreeUsage(peak, cpu.userNanos(), cpu.systemNanos(), pidsHit);
  }

  /** The tree's peak memory in bytes, or -1 where this cgroup does not measure it. */
  long peakMemoryBytes() throws IOException;

  /** The tree's CPU time by user and system, as far as this cgroup measures it. */
  CpuTimes cpuTimes() throws IOException;

  /** Whether the tree hit its process cap. */
  boolean pidsLimitHit() throws IOException;

  /** CPU time in nanoseconds; -1 where not measured. */
  record CpuTimes(long userNanos, long systemNanos) {
    static final CpuTimes UNMEASURED = new CpuTimes(-1, -1);
  }

  /**
   * Kills what is left, waits (bounded) until the cgroup is empty and removes its directories.
   * Idempotent.
   *
   * @throws IOException when a directory could not be removed (it stays for the next start's
   *     cleanup)
   */
  void remove() throws IOException;

  /** The directory of this cgroup in its main hierarchy, for messages. */
  Path path();

  /**
   * Kills what is in {@code cg} and waits until it is empty, killing again every 100 ms (a process
   * can be forking while it is killed).
   *
   * @throws IOException when processes remain after {@code maxNanos}
   */
  static void killAndDrain(TreeCgroup cg, long maxNanos) throws IOException {
    long start = System.nanoTime();
    long lastKill = Long.MIN_VALUE;
    while (cg.hasProcesses()) {
      long now = System.nanoTime();
      if (now - start > maxNanos) {
        throw new IOException("processes remain in " + cg.path() + " after SIGKILL");
      }
      if (lastKill == Long.MIN_VALUE || now - lastKill > 100_000_000L) {
        cg.kill();
        lastKill = now;
      }
      LockSupport.parkNanos(200_000);
    }
  }

  /** Reads a whole small cgroup file, trimmed. */
  static String read(Path file) throws IOException {
    return CgroupFiles.read(file).trim();
  }

  /** The value of {@code key} in a flat-keyed cgroup file ({@code key value} lines), or -1. */
  static long keyed(Path file, String key) throws IOException {
    return keyedValue(CgroupFiles.read(file), key);
  }

  /** The value of {@code key} in the content of a flat-keyed cgroup file, or -1. */
  static long keyedValue(String content, String key) {
    for (String line : content.lines().toList()) {
      int sp = line.indexOf(' ');
      if (sp > 0 && line.regionMatches(0, key, 0, sp) && sp == key.length()) {
        return Long.parseLong(line.substring(sp + 1).trim());
      }
    }
    return -1;
  }
}
