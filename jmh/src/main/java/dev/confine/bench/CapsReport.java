package dev.confine.bench;

import dev.confine.CapsMechanism;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.local.LocalRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The cap benchmarks that are not micro-benchmarks, run by {@code scripts/bench} after JMH. Every
 * mechanism is measured in the same run, the runs interleaved (one of each mechanism per round), so
 * that a change in the machine's load hits them alike.
 *
 * <ul>
 *   <li><b>Memory overshoot.</b> {@code c/alloc_touch} allocates and touches 1 GiB as fast as it
 *       can under a 256 MiB cap and writes its own resident size after every MiB, unbuffered; the
 *       last line captured before the kill is its true peak to within 1 MiB. Overshoot = peak −
 *       cap, under cgroup v1 and under the /proc sampler, with each mechanism's own {@code
 *       usage().peakMemoryBytes()} alongside.
 *   <li><b>Tree-kill latency.</b> A shell with 20 background {@code sleep 100}s and a timeout T:
 *       latency = (exec returned) − (call started + T); exec returns once the tree is killed and
 *       the leader reaped. After every run the 20 sleeps (their pids, echoed by the shell) are
 *       checked in /proc: still running is a failure; a zombie (dead, waiting for init to reap it)
 *       is counted apart.
 * </ul>
 *
 * <p>Usage: {@code CapsReport --alloc-touch PATH [--out caps.json] [--quick]}. Prints a summary and
 * writes the numbers as one JSON object.
 */
public final class CapsReport {
  private static final long MIB = 1L << 20;
  private static final long CAP = 256 * MIB;
  private static final Duration ALLOC_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration KILL_TIMEOUT = Duration.ofMillis(500);
  private static final int SLEEPS = 20;
  private static final String TREE =
      "i=0; while [ $i -lt " + SLEEPS + " ]; do sleep 100 & echo $!; i=$((i+1)); done; wait";

  private CapsReport() {}

  public static void main(String[] args) throws Exception {
    String allocTouch = null;
    Path out = Path.of("target/bench/caps.json");
    boolean quick = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--alloc-touch" -> allocTouch = Path.of(args[++i]).toAbsolutePath().toString();
        case "--out" -> out = Path.of(args[++i]);
        case "--quick" -> quick = true;
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (allocTouch == null || !Files.isExecutable(Path.of(allocTouch))) {
      throw new IllegalArgumentException("--alloc-touch must name the compiled c/alloc_touch.c");
    }
    int overshootRuns = quick ? 3 : 10;
    int killRuns = quick ? 5 : 30;

    Path root = Files.createTempDirectory("confine-caps");
    try {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("loadBefore", loadAverage());
      json.put("cpus", Runtime.getRuntime().availableProcessors());
      json.put("overshoot", overshoot(root, allocTouch, overshootRuns));
      json.put("killLatency", killLatency(root, killRuns));
      json.put("loadAfter", loadAverage());
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, Json.write(json) + "\n", StandardCharsets.UTF_8);
      System.out.println("caps report written to " + out);
    } finally {
      Files.deleteIfExists(root);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Memory overshoot

  private static Map<String, Object> overshoot(Path root, String allocTouch, int runs) {
    ExecOptions opts =
        ExecOptions.builder()
            .timeout(ALLOC_TIMEOUT)
            .resources(ResourceLimits.builder().memoryBytes(CAP).build())
            .build();
    Map<String, LocalRunner> runners = new LinkedHashMap<>();
    Map<String, String> skipped = new LinkedHashMap<>();
    for (CapsMechanism m : List.of(CapsMechanism.CGROUP_V1, CapsMechanism.PROC_SAMPLER)) {
      LocalRunner r = LocalRunner.builder(root.toString()).caps(m).build();
      if (r.enforcement().memoryCap()) {
        runners.put(m.name(), r);
      } else {
        skipped.put(m.name(), "no memory cap with this mechanism on this host");
      }
    }
    Map<String, List<AllocRun>> results = new LinkedHashMap<>();
    runners.keySet().forEach(k -> results.put(k, new ArrayList<>()));
    System.out.printf(
        Locale.ROOT,
        "memory overshoot: alloc_touch 1 GiB under a %d MiB cap, %d runs per mechanism%n",
        CAP / MIB,
        runs);
    for (int i = 0; i < runs; i++) {
      for (var e : runners.entrySet()) {
        AllocRun r = allocRun(e.getValue(), allocTouch, opts);
        results.get(e.getKey()).add(r);
        System.out.printf(
            Locale.ROOT,
            "  %-12s run %2d: %-15s peak RSS %7.1f MiB (overshoot %+6.1f; anonymous %+6.1f),"
                + " mechanism's peak %s, %d lines, %.0f ms%n",
            e.getKey(),
            i + 1,
            r.outcome,
            r.peakRss / (double) MIB,
            r.overshootMib(),
            r.anonOvershootMib(),
            r.usagePeak < 0
                ? "n/a"
                : String.format(Locale.ROOT, "%.1f MiB", r.usagePeak / 1048576.0),
            r.lines,
            r.wallMs);
      }
    }
    Map<String, Object> mechanisms = new LinkedHashMap<>();
    for (var e : results.entrySet()) {
      List<AllocRun> rs = e.getValue();
      double[] over = rs.stream().mapToDouble(AllocRun::overshootMib).toArray();
      double[] anon = rs.stream().mapToDouble(AllocRun::anonOvershootMib).toArray();
      double[] usage =
          rs.stream()
              .mapToDouble(r -> r.usagePeak < 0 ? Double.NaN : (r.usagePeak - CAP) / (double) MIB)
              .toArray();
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("medianOvershootMiB", median(over));
      m.put("maxOvershootMiB", max(over));
      m.put("medianAnonOvershootMiB", median(anon));
      m.put("maxAnonOvershootMiB", max(anon));
      m.put("medianUsagePeakOverCapMiB", median(usage));
      m.put("maxUsagePeakOverCapMiB", max(usage));
      m.put("overshootMiB", over);
      m.put("peakRssMiB", rs.stream().mapToDouble(r -> r.peakRss / (double) MIB).toArray());
      m.put(
          "fileBackedAtPeakMiB", rs.stream().mapToDouble(r -> r.peakFile / (double) MIB).toArray());
      m.put(
          "usagePeakMiB",
          rs.stream()
              .mapToDouble(r -> r.usagePeak < 0 ? Double.NaN : r.usagePeak / (double) MIB)
              .toArray());
      m.put("outcomes", rs.stream().map(r -> r.outcome).toList());
      m.put("reachedLimit", rs.stream().filter(r -> r.lines > 1024).count());
      m.put("wallMs", rs.stream().mapToDouble(r -> r.wallMs).toArray());
      mechanisms.put(e.getKey(), m);
      System.out.printf(
          Locale.ROOT,
          "  %-12s overshoot (true peak RSS - cap): median %+.1f MiB, max %+.1f MiB (anonymous"
              + " part: median %+.1f, max %+.1f); mechanism's own peak - cap: median %+.1f, max"
              + " %+.1f MiB%n",
          e.getKey(),
          median(over),
          max(over),
          median(anon),
          max(anon),
          median(usage),
          max(usage));
    }
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("capMiB", CAP / MIB);
    o.put("allocateMiB", 1024);
    o.put("runs", runs);
    o.put("mechanisms", mechanisms);
    o.put("skipped", skipped);
    return o;
  }

  /**
   * One run: the peak resident size the child reported, the file-backed part of it (charged to
   * whichever cgroup first read those pages), the mechanism's own peak, the lines read.
   */
  private record AllocRun(
      String outcome, long peakRss, long peakFile, long usagePeak, int lines, double wallMs) {
    double overshootMib() {
      return (peakRss - CAP) / (double) MIB;
    }

    double anonOvershootMib() {
      return (peakRss - peakFile - CAP) / (double) MIB;
    }
  }

  private static AllocRun allocRun(LocalRunner runner, String allocTouch, ExecOptions opts) {
    long start = System.nanoTime();
    ExecResult r;
    String outcome;
    try {
      r = runner.exec(allocTouch, List.of("1024"), opts);
      outcome = r.signaled() ? "signal " + r.signal() : "exit " + r.exitCode();
    } catch (SandboxException e) {
      outcome = e.kind().name();
      r =
          e.partialResult()
              .orElseThrow(() -> new IllegalStateException("no partial result: " + e, e));
    }
    double wallMs = (System.nanoTime() - start) / 1e6;
    // Only complete lines count: a line cut by the kill is not a measurement.
    String text = r.stdoutText();
    int end = text.lastIndexOf('\n');
    if (end < 0) {
      throw new IllegalStateException("alloc_touch wrote nothing (" + outcome + ")");
    }
    String[] lines = text.substring(0, end).split("\n");
    long peak = 0;
    long peakFile = 0;
    for (String l : lines) {
      String[] f = l.trim().split(" ");
      long resident = Long.parseLong(f[0]);
      if (resident >= peak) {
        peak = resident;
        peakFile = Long.parseLong(f[1]);
      }
    }
    return new AllocRun(outcome, peak, peakFile, r.usage().peakMemoryBytes(), lines.length, wallMs);
  }

  // ---------------------------------------------------------------------------------------------
  // Tree-kill latency

  private record Mechanism(String name, CapsMechanism caps, ResourceLimits limits, String kill) {}

  private static Map<String, Object> killLatency(Path root, int runs) {
    List<Mechanism> all =
        List.of(
            new Mechanism(
                "CGROUP_V1",
                CapsMechanism.CGROUP_V1,
                ResourceLimits.builder().memoryBytes(1L << 30).maxProcesses(100).build(),
                "v1 cgroup (freezer, SIGKILL each member)"),
            new Mechanism(
                "CGROUP_V2",
                CapsMechanism.CGROUP_V2,
                ResourceLimits.builder().cpuMillicores(1000).build(),
                "v2 cgroup (cgroup.kill)"),
            new Mechanism(
                "NONE",
                CapsMechanism.NONE,
                ResourceLimits.NONE,
                "no caps: the tree tracked as AUTO does (here a v1 freezer cgroup)"),
            new Mechanism(
                "PROC_SAMPLER",
                CapsMechanism.PROC_SAMPLER,
                ResourceLimits.builder().memoryBytes(1L << 30).build(),
                "sampler: every member stopped, then killed, and the process group"));
    Map<String, LocalRunner> runners = new LinkedHashMap<>();
    Map<String, ExecOptions> options = new LinkedHashMap<>();
    Map<String, String> skipped = new LinkedHashMap<>();
    for (Mechanism m : all) {
      LocalRunner r = LocalRunner.builder(root.toString()).caps(m.caps).build();
      ExecOptions opts = ExecOptions.builder().timeout(KILL_TIMEOUT).resources(m.limits).build();
      try {
        // Also the warm-up: class loading, the first cgroup, the event loop.
        for (int i = 0; i < 2; i++) {
          killRun(r, opts);
        }
        runners.put(m.name, r);
        options.put(m.name, opts);
      } catch (SandboxException e) {
        skipped.put(m.name, e.kind() + ": " + e.getMessage());
      }
    }
    System.out.printf(
        Locale.ROOT,
        "tree-kill latency: sh + %d background sleeps, timeout %d ms, %d runs per mechanism%n",
        SLEEPS,
        KILL_TIMEOUT.toMillis(),
        runs);
    skipped.forEach((k, v) -> System.out.printf(Locale.ROOT, "  %-12s skipped: %s%n", k, v));
    Map<String, List<KillRun>> results = new LinkedHashMap<>();
    runners.keySet().forEach(k -> results.put(k, new ArrayList<>()));
    for (int i = 0; i < runs; i++) {
      for (var e : runners.entrySet()) {
        results.get(e.getKey()).add(killRun(e.getValue(), options.get(e.getKey())));
      }
    }
    Map<String, Object> mechanisms = new LinkedHashMap<>();
    for (Mechanism m : all) {
      List<KillRun> rs = results.get(m.name);
      if (rs == null) {
        continue;
      }
      double[] lat = rs.stream().mapToDouble(KillRun::latencyMs).toArray();
      Map<String, Object> j = new LinkedHashMap<>();
      j.put("kill", m.kill);
      j.put("medianMs", median(lat));
      j.put("p90Ms", percentile(lat, 90));
      j.put("maxMs", max(lat));
      j.put("latencyMs", lat);
      j.put("sleepsStarted", rs.stream().mapToInt(KillRun::sleeps).sum());
      j.put("sleepsRunningAfterReturn", rs.stream().mapToInt(KillRun::running).sum());
      j.put("sleepsZombieAfterReturn", rs.stream().mapToInt(KillRun::zombies).sum());
      j.put("sleepsRunning1sLater", rs.stream().mapToInt(KillRun::runningLater).sum());
      j.put("outcomes", rs.stream().map(KillRun::outcome).distinct().toList());
      mechanisms.put(m.name, j);
      System.out.printf(
          Locale.ROOT,
          "  %-12s median %6.1f ms, p90 %6.1f ms, max %6.1f ms; sleeps started %d of %d,"
              + " running at return %d (1 s later %d), zombies at return %d; %s%n",
          m.name,
          median(lat),
          percentile(lat, 90),
          max(lat),
          (Integer) j.get("sleepsStarted"),
          rs.size() * SLEEPS,
          (Integer) j.get("sleepsRunningAfterReturn"),
          (Integer) j.get("sleepsRunning1sLater"),
          (Integer) j.get("sleepsZombieAfterReturn"),
          m.kill);
    }
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("timeoutMs", KILL_TIMEOUT.toMillis());
    o.put("sleeps", SLEEPS);
    o.put("runs", runs);
    o.put("targetMedianMs", 50);
    o.put("mechanisms", mechanisms);
    o.put("skipped", skipped);
    return o;
  }

  /**
   * One run: from the deadline to exec's return; how many sleeps the shell had started, and their
   * states when exec returned (zombies are dead: the shell's orphans, reaped by init, not the JVM).
   */
  private record KillRun(
      double latencyMs, String outcome, int sleeps, int running, int zombies, int runningLater) {}

  private static KillRun killRun(LocalRunner runner, ExecOptions opts) {
    long start = System.nanoTime();
    ExecResult r;
    String outcome;
    try {
      r = runner.exec("sh", List.of("-c", TREE), opts);
      outcome = "exit " + r.exitCode();
    } catch (SandboxException e) {
      if (e.partialResult().isEmpty()) {
        throw e;
      }
      outcome = e.kind().name();
      r = e.partialResult().get();
    }
    long returned = System.nanoTime();
    double latencyMs = (returned - start - opts.timeout().toNanos()) / 1e6;
    List<Integer> pids = new ArrayList<>();
    for (String line : r.stdoutText().split("\n")) {
      if (!line.isBlank()) {
        pids.add(Integer.parseInt(line.trim()));
      }
    }
    int running = 0;
    int zombies = 0;
    for (int pid : pids) {
      switch (state(pid)) {
        case 'Z' -> zombies++;
        case '-' -> {}
        default -> running++;
      }
    }
    int runningLater = 0;
    if (running > 0) {
      sleepQuietly(1000);
      for (int pid : pids) {
        char s = state(pid);
        if (s != 'Z' && s != '-') {
          runningLater++;
          ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly); // clean up after it
        }
      }
    }
    if (!outcome.equals("TIMEOUT")) {
      throw new IllegalStateException("expected a TIMEOUT, got " + outcome);
    }
    return new KillRun(latencyMs, outcome, pids.size(), running, zombies, runningLater);
  }

  /**
   * The state letter of a {@code sleep} process from /proc/PID/stat, or '-' when there is no such
   * process (or the pid was reused by something else).
   */
  private static char state(int pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      int open = stat.indexOf('(');
      int close = stat.lastIndexOf(')');
      if (open < 0 || close < 0 || !stat.substring(open + 1, close).equals("sleep")) {
        return '-';
      }
      return stat.charAt(close + 2);
    } catch (IOException e) { // NoSuchFileException: gone
      return '-';
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  private static void sleepQuietly(long millis) {
    try {
      TimeUnit.MILLISECONDS.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static double[] loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return new double[] {
        Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2])
      };
    } catch (IOException e) {
      return new double[0];
    }
  }

  static double median(double[] values) {
    return percentile(values, 50);
  }

  /** The p-th percentile, interpolated between the closest ranks (p50 of an even count = mean). */
  static double percentile(double[] values, double p) {
    double[] v = Arrays.stream(values).filter(x -> !Double.isNaN(x)).sorted().toArray();
    if (v.length == 0) {
      return Double.NaN;
    }
    double rank = p / 100.0 * (v.length - 1);
    int lo = (int) Math.floor(rank);
    int hi = (int) Math.ceil(rank);
    return v[lo] + (v[hi] - v[lo]) * (rank - lo);
  }

  static double max(double[] values) {
    return Arrays.stream(values).filter(x -> !Double.isNaN(x)).max().orElse(Double.NaN);
  }

  /** Just enough JSON for maps, lists, strings, numbers and number arrays. */
  static final class Json {
    private Json() {}

    static String write(Object o) {
      StringBuilder sb = new StringBuilder();
      write(sb, o);
      return sb.toString();
    }

    private static void write(StringBuilder sb, Object o) {
      switch (o) {
        case null -> sb.append("null");
        case Map<?, ?> m -> {
          sb.append('{');
          boolean first = true;
          for (var e : m.entrySet()) {
            if (!first) {
              sb.append(',');
            }
            first = false;
            string(sb, e.getKey().toString());
            sb.append(':');
            write(sb, e.getValue());
          }
          sb.append('}');
        }
        case List<?> l -> {
          sb.append('[');
          for (int i = 0; i < l.size(); i++) {
            if (i > 0) {
              sb.append(',');
            }
            write(sb, l.get(i));
          }
          sb.append(']');
        }
        case double[] a -> {
          sb.append('[');
          for (int i = 0; i < a.length; i++) {
            if (i > 0) {
              sb.append(',');
            }
            number(sb, a[i]);
          }
          sb.append(']');
        }
        case Double d -> number(sb, d);
        case Number n -> sb.append(n);
        case Boolean b -> sb.append(b);
        default -> string(sb, o.toString());
      }
    }

    private static void number(StringBuilder sb, double d) {
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        sb.append("null");
      } else {
        sb.append(String.format(Locale.ROOT, "%.3f", d));
      }
    }

    private static void string(StringBuilder sb, String s) {
      sb.append('"');
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '"' -> sb.append("\\\"");
          case '\\' -> sb.append("\\\\");
          case '\n' -> sb.append("\\n");
          default -> {
            if (c < 0x20) {
              sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
              sb.append(c);
            }
          }
        }
      }
      sb.append('"');
    }
  }
}
