package dev.confine.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * Live platform threads of this JVM (virtual threads are not counted by {@link
 * ThreadMXBean#getThreadCount()}; their carriers are). Records the count before a trial, the exact
 * peak during it ({@link ThreadMXBean#getPeakThreadCount()} after a reset) and the count after it,
 * with by-kind breakdowns (before, after, and the largest of the snapshots taken while a batch
 * runs), and reports them as one JSON line: appended to the file named by {@code
 * CONFINE_BENCH_THREADS_FILE} when set, else printed. Virtual-thread carriers are the JDK's
 * ForkJoinPool workers: they can grow past the parallelism when a virtual thread blocks in file
 * I/O, whichever engine runs, so the breakdown keeps them apart from the threads an engine owns.
 */
final class ThreadCounts {
  private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

  private int cold = -1;
  private int before = -1;
  private Map<String, Integer> beforeBreakdown = Map.of();
  private Map<String, Integer> busiest = Map.of();
  private int busiestTotal = -1;

  /** The count before anything was spawned. */
  void cold() {
    cold = MX.getThreadCount();
  }

  /** The idle count once the engine is warm; starts the peak measurement. */
  void before() {
    beforeBreakdown = breakdown();
    before = MX.getThreadCount();
    MX.resetPeakThreadCount();
  }

  /** Takes a by-kind breakdown now and keeps it if it is the largest seen. */
  void snapshot() {
    Map<String, Integer> b = breakdown();
    int total = b.values().stream().mapToInt(Integer::intValue).sum();
    if (total > busiestTotal) {
      busiestTotal = total;
      busiest = b;
    }
  }

  /** Reports the counts for {@code benchmark}. */
  void report(String benchmark, String variant) {
    int peak = MX.getPeakThreadCount();
    int after = MX.getThreadCount();
    String line =
        "{\"benchmark\":\""
            + benchmark
            + "\",\"variant\":\""
            + variant
            + "\",\"cold\":"
            + cold
            + ",\"before\":"
            + before
            + ",\"peak\":"
            + peak
            + ",\"after\":"
            + after
            + ",\"beforeBreakdown\":"
            + json(beforeBreakdown)
            + ",\"busiest\":"
            + json(busiest)
            + ",\"afterBreakdown\":"
            + json(breakdown())
            + "}";
    String file = System.getenv("CONFINE_BENCH_THREADS_FILE");
    if (file == null || file.isEmpty()) {
      System.out.println("confine-threads " + line);
    } else {
      try {
        Files.writeString(
            Path.of(file),
            line + "\n",
            StandardCharsets.UTF_8,
            StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** The live platform threads by kind. */
  static Map<String, Integer> breakdown() {
    Map<String, Integer> kinds = new TreeMap<>();
    for (ThreadInfo t : MX.getThreadInfo(MX.getAllThreadIds(), 0)) {
      if (t != null) {
        kinds.merge(kind(t.getThreadName()), 1, Integer::sum);
      }
    }
    return kinds;
  }

  private static String kind(String name) {
    if (name.startsWith("process reaper")) {
      return "processReaper";
    }
    if (name.startsWith("ForkJoinPool-")) {
      return "virtualThreadCarrier";
    }
    if (name.startsWith("PtyProcess Reaper")) {
      return "pty4jReaper";
    }
    if (name.startsWith("confine-")) {
      return "confine";
    }
    return "other";
  }

  private static String json(Map<String, Integer> m) {
    StringBuilder sb = new StringBuilder("{");
    m.forEach(
        (k, v) -> {
          if (sb.length() > 1) {
            sb.append(',');
          }
          sb.append('"').append(k).append("\":").append(v);
        });
    return sb.append('}').toString();
  }
}
