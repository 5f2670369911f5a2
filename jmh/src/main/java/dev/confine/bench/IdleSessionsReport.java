package dev.confine.bench;

import com.pty4j.PtyProcess;
import dev.confine.local.LocalRunner;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * N idle PTY sessions at once (1,000 by default), each running {@code cat} on its own pty and
 * waiting for input, opened one after the other from one thread and held open; then all closed. Run
 * by {@code scripts/bench} after JMH: a plain main, because what it measures is a state (N sessions
 * open), not an operation. Three engines in the same JVM, one after the other, each from its own
 * baseline: Confine ({@link LocalRunner#start} with a terminal), JetBrains' pty4j (the same {@code
 * cat} on a pty), and the JDK's {@link ProcessBuilder} ({@code cat} on pipes: no pty, but the JDK's
 * thread per child).
 *
 * <p>At three points per engine (before: after a warm-up of a few sessions opened and closed; open:
 * all N open and idle for a second; after: all closed) it records, once the heap has settled (full
 * GCs until the used heap stops shrinking):
 *
 * <ul>
 *   <li>live platform threads ({@code ThreadMXBean.getThreadCount()}), by kind, and the JVM's peak
 *       while the sessions were opened (the peak counter is reset at "before");
 *   <li>the used heap after GC ({@code MemoryMXBean}): (open − before) / N is the heap each idle
 *       session keeps alive, everything its engine holds for it (session objects, registry entry,
 *       event-loop registration, a pty4j or JDK thread's Java object), not its thread stacks, which
 *       are native;
 *   <li>the bytes every thread allocated ({@code getTotalThreadAllocatedBytes}), per session
 *       opened: garbage included;
 *   <li>the open file descriptors ({@code /proc/self/fd}): (open − before) / N per session, 3 for
 *       Confine (the pty master, its duplicate for writing, the pidfd);
 *   <li>the JVM's resident size ({@code VmRSS}): heap growth, thread stacks and malloc together, so
 *       only a rough figure.
 * </ul>
 *
 * The output logs are empty (checked: a zero-wait read of each Confine session returns nothing), so
 * Confine's per-session heap excludes any output: only the empty log's own objects are in it.
 *
 * <p>Usage: {@code IdleSessionsReport [--sessions N] [--out sessions-idle.json]}. Prints a summary
 * and writes the numbers as one JSON object. Needs N ptys (the kernel's {@code pty/max}, 4096 by
 * default) and about 3N file descriptors (the JVM raises its soft limit to the hard one).
 */
public final class IdleSessionsReport {
  private static final List<String> CAT = List.of("cat");
  private static final int WARM_UP = 3;
  private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private IdleSessionsReport() {}

  /** One engine's way to open and close an idle {@code cat}. */
  private interface Engine {
    Object open() throws Exception;

    /** Whether the child is still running, and (Confine) its log still empty. */
    boolean idle(Object session) throws Exception;

    void close(Object session) throws Exception;
  }

  public static void main(String[] args) throws Exception {
    int n = 1000;
    Path out = Path.of("target/bench/sessions-idle.json");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--sessions" -> n = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path root = Files.createTempDirectory("confine-idle");
    try {
      LocalRunner runner = LocalRunner.create(root.toString());
      Map<String, Engine> engines = new LinkedHashMap<>();
      engines.put("confine", confine(runner));
      engines.put("pty4j", pty4j(root));
      engines.put("processBuilder", processBuilder(root));

      Map<String, Object> json = new LinkedHashMap<>();
      json.put("sessions", n);
      json.put("cpus", Runtime.getRuntime().availableProcessors());
      json.put("loadBefore", loadAverage());
      json.put("coldThreads", ThreadCounts.breakdown());
      Map<String, Object> results = new LinkedHashMap<>();
      for (var e : engines.entrySet()) {
        System.out.printf(Locale.ROOT, "%s: %d idle cat sessions%n", e.getKey(), n);
        results.put(e.getKey(), measure(e.getValue(), n));
      }
      json.put("engines", results);
      json.put("loadAfter", loadAverage());
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, CapsReport.Json.write(json) + "\n", StandardCharsets.UTF_8);
      System.out.println("idle sessions report written to " + out);
    } finally {
      Files.deleteIfExists(root);
    }
  }

  private static Map<String, Object> measure(Engine engine, int n) throws Exception {
    for (int i = 0; i < WARM_UP; i++) {
      engine.close(engine.open());
    }
    Snapshot before = Snapshot.take();
    THREADS.resetPeakThreadCount();
    List<Object> open = new ArrayList<>(n);
    long t0 = System.nanoTime();
    try {
      for (int i = 0; i < n; i++) {
        open.add(engine.open());
      }
      long openNanos = System.nanoTime() - t0;
      Thread.sleep(1000);
      int idle = 0;
      for (Object s : open) {
        idle += engine.idle(s) ? 1 : 0;
      }
      Snapshot during = Snapshot.take();
      int peak = THREADS.getPeakThreadCount();
      t0 = System.nanoTime();
      for (Object s : open) {
        engine.close(s);
      }
      long closeNanos = System.nanoTime() - t0;
      open.clear();
      Snapshot after = Snapshot.take();

      Map<String, Object> r = new LinkedHashMap<>();
      r.put("idle", idle);
      r.put("openMs", openNanos / 1e6);
      r.put("closeMs", closeNanos / 1e6);
      r.put("before", before.json());
      r.put("open", during.json());
      r.put("after", after.json());
      r.put("peakThreads", peak);
      r.put("heapBytesPerSession", (double) (during.heapUsed - before.heapUsed) / n);
      r.put("allocatedBytesPerSession", (double) (during.allocated - before.allocated) / n);
      r.put("fdsPerSession", (double) (during.fds - before.fds) / n);
      r.put("rssBytesPerSession", (double) (during.rss - before.rss) / n);
      System.out.printf(
          Locale.ROOT,
          "  %d of %d idle; opened in %.0f ms, closed in %.0f ms; platform threads %d before, %d"
              + " open (peak %d), %d after; per session: heap %.0f B, allocated %.0f B, fds %.2f,"
              + " RSS %.0f B%n",
          idle,
          n,
          openNanos / 1e6,
          closeNanos / 1e6,
          before.threads,
          during.threads,
          peak,
          after.threads,
          (double) (during.heapUsed - before.heapUsed) / n,
          (double) (during.allocated - before.allocated) / n,
          (double) (during.fds - before.fds) / n,
          (double) (during.rss - before.rss) / n);
      return r;
    } finally {
      for (Object s : open) {
        engine.close(s);
      }
    }
  }

  private static Engine confine(LocalRunner runner) {
    return new Engine() {
      @Override
      public Object open() {
        return runner.start(ProcessSpec.terminal(CAT));
      }

      @Override
      public boolean idle(Object session) throws InterruptedException {
        ProcessSession s = (ProcessSession) session;
        ProcessOutput o = s.read(0, 1, Duration.ZERO);
        return s.exitValue().isEmpty() && o.chunks().isEmpty();
      }

      @Override
      public void close(Object session) {
        ((ProcessSession) session).close();
      }
    };
  }

  private static Engine pty4j(Path root) {
    return new Engine() {
      @Override
      public Object open() throws IOException {
        return Sessions.startPty4j(root, CAT.toArray(String[]::new));
      }

      @Override
      public boolean idle(Object session) {
        return ((PtyProcess) session).isAlive();
      }

      @Override
      public void close(Object session) throws Exception {
        PtyProcess p = (PtyProcess) session;
        p.destroyForcibly();
        Sessions.finish(p);
      }
    };
  }

  private static Engine processBuilder(Path root) {
    return new Engine() {
      @Override
      public Object open() throws IOException {
        return new ProcessBuilder(CAT).directory(root.toFile()).start();
      }

      @Override
      public boolean idle(Object session) {
        return ((Process) session).isAlive();
      }

      @Override
      public void close(Object session) throws Exception {
        Process p = (Process) session;
        p.destroyForcibly();
        p.waitFor();
        p.getOutputStream().close();
        p.getInputStream().close();
        p.getErrorStream().close();
      }
    };
  }

  /** The JVM's state at one point, once the heap has settled. */
  private record Snapshot(
      int threads, Map<String, Integer> kinds, long heapUsed, long allocated, int fds, long rss) {
    static Snapshot take() throws IOException, InterruptedException {
      long used = settledHeap();
      return new Snapshot(
          THREADS.getThreadCount(),
          ThreadCounts.breakdown(),
          used,
          THREADS.getTotalThreadAllocatedBytes(),
          openFds(),
          residentBytes());
    }

    Map<String, Object> json() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("threads", threads);
      m.put("threadKinds", kinds);
      m.put("heapUsed", heapUsed);
      m.put("fds", fds);
      m.put("rss", rss);
      return m;
    }
  }

  /** Full GCs until the used heap stops shrinking (by less than 64 KiB), at most 10. */
  private static long settledHeap() throws InterruptedException {
    long last = Long.MAX_VALUE;
    for (int i = 0; i < 10; i++) {
      System.gc();
      Thread.sleep(50);
      long used = MEMORY.getHeapMemoryUsage().getUsed();
      if (last - used < 64 * 1024) {
        return Math.min(last, used);
      }
      last = used;
    }
    return last;
  }

  private static int openFds() throws IOException {
    int n = 0;
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
      for (Path ignored : fds) {
        n++;
      }
    }
    return n - 1; // the directory stream's own fd
  }

  private static long residentBytes() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    return -1;
  }

  private static double[] loadAverage() {
    return CapsReport.loadAverage();
  }
}
