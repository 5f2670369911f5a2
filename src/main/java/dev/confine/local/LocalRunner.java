package dev.confine.local;

import dev.confine.Enforcement;
import dev.confine.EnforcementReporter;
import dev.confine.ExecOptions;
import dev.confine.ExecPolicy;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.ResourceLimits;
import dev.confine.RootedPaths;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.CgroupGuard;
import dev.confine.linux.Cgroups;
import dev.confine.linux.EngineException;
import dev.confine.linux.NativeAccess;
import dev.confine.linux.SamplerGuard;
import dev.confine.linux.TreeGuard;
import dev.confine.linux.TreeLimits;
import dev.confine.session.ProcessInfo;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessRegistry;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Runs commands as host processes, without isolation: the working directory is contained in the
 * root, the environment follows the {@link dev.confine.EnvPolicy}, output is capped per stream, and
 * memory, CPU and process caps hold where this host's cgroups (else its /proc) allow them. Network
 * policies other than {@link NetMode#DEFAULT} are refused with NOT_AVAILABLE, as are caps this host
 * cannot enforce.
 *
 * <p>Every exec and session, capped or not, is tracked beyond its process group wherever the host
 * offers a way: its own cgroup (v1 freezer, v2 {@code cgroup.kill}), else the /proc sampler's
 * tracking (see {@link #capabilities()}, row "tree kill"). On timeout, interrupt or cap breach the
 * whole tree is killed, escapees from the group and the session included; when the leader exits,
 * whatever of its tree is left is killed after at most the 2 s drain, and {@link
 * ExecResult#leftoversKilled()} says so. When {@code exec} returns nothing it started is running.
 *
 * <p>Thread-safe. A platform thread waits for its own child (poll on its pidfd and pipes); the
 * children of virtual threads, and sessions, share the engine's one event-loop thread.
 */
public final class LocalRunner implements Runner, EnforcementReporter, ProcessManager {
  /** The default capture cap per stream: 10 MiB. */
  public static final long DEFAULT_MAX_OUTPUT_BYTES = 10L << 20;

  /** How long output may keep flowing after the leader exits (or is killed). */
  public static final Duration DRAIN = Duration.ofSeconds(2);

  private final Path root;
  private final long defaultMaxOutputBytes;
  private final HostEnvironment hostEnvironment;
  private final Cgroups cgroups; // null: no cgroup caps on this host or by choice
  private final String noCgroupsReason;
  private final boolean sampler; // caps through the /proc sampler (when there are no cgroups)
  private final Tracking tracking;
  private final Enforcement enforcement;
  private final ProcessRegistry sessions = new ProcessRegistry(this::startSession);

  /**
   * How every tree is held beyond its process group: a cgroup without caps ({@code cgroups}), the
   * sampler's tracking ({@code sampler}), or nothing ({@code why}).
   */
  private record Tracking(Cgroups cgroups, boolean sampler, String why) {
    static Tracking of(Cgroups cgroups, boolean samplerWorks, String why) {
      return new Tracking(cgroups, cgroups == null && samplerWorks, why);
    }
  }

  private LocalRunner(
      Path root,
      long defaultMaxOutputBytes,
      Supplier<Map<String, String>> hostEnvironment,
      Cgroups cgroups,
      String noCgroupsReason,
      boolean sampler,
      Tracking tracking) {
    this.root = root;
    this.sampler = sampler;
    this.defaultMaxOutputBytes = defaultMaxOutputBytes;
    this.hostEnvironment = new HostEnvironment(hostEnvironment);
    this.cgroups = cgroups;
    this.noCgroupsReason = noCgroupsReason;
    this.tracking = tracking;
    this.enforcement =
        !NativeAccess.isAvailable()
            ? Enforcement.NONE
            : Enforcement.builder()
                .envAllowList(true)
                .memoryCap(sampler || (cgroups != null && cgroups.memory().available()))
                .cpuCap(sampler || (cgroups != null && cgroups.cpuAccounting().available()))
                .pidsCap(cgroups != null && cgroups.pids().available())
                .cpuThrottle(!sampler && cgroups != null && cgroups.cpuThrottle().available())
                .build();
  }

  /** A runner rooted at {@code rootDir} with the default 10 MiB capture cap. */
  public static LocalRunner create(String rootDir) {
    return builder(rootDir).build();
  }

  /** A builder for a runner rooted at {@code rootDir}. */
  public static Builder builder(String rootDir) {
    return new Builder(rootDir);
  }

  /** The root: absolute, and symlink-resolved when it exists. */
  public Path root() {
    return root;
  }

  /**
   * Environment variables honour the allow-list; memory, CPU and process caps hold where the host's
   * cgroups allow them (see {@link #capabilities()}). On a host where the engine cannot run,
   * nothing at all ({@link Enforcement#NONE}).
   */
  @Override
  public Enforcement enforcement() {
    return enforcement;
  }

  /** Every policy dimension, whether it holds on this host, and by which mechanism or why not. */
  public List<HostCapability> capabilities() {
    List<HostCapability> rows = new ArrayList<>();
    String engine = NativeAccess.unavailabilityCause().orElse(null);
    rows.add(
        engine == null
            ? new HostCapability("spawn", true, "posix_spawn through FFM; pidfd + epoll reaping")
            : new HostCapability("spawn", false, engine));
    rows.add(
        new HostCapability(
            "env", engine == null, engine == null ? "explicit environment" : engine));
    for (NetMode m : List.of(NetMode.DENY_ALL, NetMode.ALLOW_LIST, NetMode.PROXY)) {
      rows.add(
          new HostCapability(
              "net " + m.name().toLowerCase(java.util.Locale.ROOT),
              false,
              "the local runner has no network isolation; use a confining backend"));
    }
    if (sampler) {
      String how =
          "/proc sampler every 50 ms (10 ms in the first 100 ms), kill on overflow, fail-closed"
              + " after 3 failed samples; approximate: a fast allocator can overshoot between"
              + " samples, and the caps count the processes the sampler sees (by ancestry and the"
              + " sessions the tree made: not one that left every known session and was orphaned"
              + " before a sample saw it) (no usable cgroups: "
              + noCgroupsReason
              + ")";
      rows.add(
          new HostCapability(
              "memory",
              true,
              "aggregate RSS from "
                  + how
                  + "; counted: each member's resident anonymous, file-backed and mapped shared"
                  + " memory (/proc stat rss = RssAnon + RssFile + RssShmem; a page shared by"
                  + " members counts once per member); not counted: shared memory and tmpfs files"
                  + " (/dev/shm, memfd, SysV segments) that no member maps, which /proc attributes"
                  + " to no process"));
      rows.add(
          new HostCapability(
              "cpu",
              true,
              "budget (the tree is killed once it is spent) from user+system time, " + how));
      rows.add(new HostCapability("cpu throttle", false, "needs a cgroup cpu controller"));
      rows.add(new HostCapability("pids", false, "needs cgroups: " + noCgroupsReason));
    } else if (cgroups == null) {
      String why = engine != null ? engine : noCgroupsReason;
      for (String d : List.of("memory", "cpu", "cpu throttle", "pids")) {
        rows.add(new HostCapability(d, false, why));
      }
    } else {
      rows.add(row("memory", cgroups.memory()));
      Cgroups.Capability cpu = cgroups.cpuAccounting();
      rows.add(
          new HostCapability(
              "cpu",
              cpu.available(),
              cpu.available()
                  ? "budget (the tree is killed once it is spent, never throttled) from "
                      + cpu.detail()
                  : cpu.detail()));
      rows.add(row("cpu throttle", cgroups.cpuThrottle()));
      rows.add(row("pids", cgroups.pids()));
    }
    rows.add(treeKillRow(engine));
    rows.add(new HostCapability("disk", false, "no quota mechanism"));
    rows.add(
        new HostCapability(
            "filesystem bounds",
            false,
            "the local runner does not confine writes; use a confining backend"));
    return rows;
  }

  /** What the sampler's tracking cannot see, said wherever it tracks a tree. */
  static final String SAMPLER_TRACKING =
      "/proc sampler: members by ancestry (children files) and by the sessions the tree made"
          + " (a /proc scan), a last look when the leader exits, every member stopped, then"
          + " killed; approximate: it cannot see a process that left every known session and was"
          + " orphaned before any sample saw it (a daemon's double fork within the first"
          + " milliseconds, or between two samples)";

  private HostCapability treeKillRow(String engine) {
    if (engine != null) {
      return new HostCapability("tree kill", false, engine);
    }
    if (tracking.cgroups() != null) {
      return new HostCapability(
          "tree kill",
          true,
          "every exec and session, capped or not: "
              + tracking.cgroups().treeKill().detail()
              + "; a child that may write the cgroup filesystem (root, as this runner does not"
              + " bound writes) can move itself out of its cgroup");
    }
    if (tracking.sampler()) {
      return new HostCapability(
          "tree kill",
          true,
          "every exec and session, capped or not: "
              + SAMPLER_TRACKING
              + " (no usable cgroups: "
              + tracking.why()
              + ")");
    }
    return new HostCapability(
        "tree kill",
        false,
        "process group only: no cgroup can be made ("
            + tracking.why()
            + ") and /proc sampling"
            + " does not work here");
  }

  private static HostCapability row(String dimension, Cgroups.Capability c) {
    return new HostCapability(dimension, c.available(), c.detail());
  }

  @Override
  public ExecResult exec(String command, List<String> args, ExecOptions options) {
    ExecRequest request = ExecRequest.of(command, args, options);
    ExecOptions opts = request.options();
    String cmd = request.command();
    long deadline =
        opts.hasTimeout()
            ? ExecOutcomes.saturatedDeadline(System.nanoTime(), opts.timeout())
            : Long.MAX_VALUE;

    checkPolicy(opts);
    WorkDir workDir = ExecOutcomes.workDir(root, cmd, opts);
    List<String> env = opts.env().apply(hostEnvironment.entries());
    return ExecOutcomes.run(
        request,
        workDir,
        env,
        ExecOutcomes.outputCap(opts, defaultMaxOutputBytes),
        guardFor(cmd, opts),
        deadline);
  }

  /**
   * Starts a session under the same policy and checks as {@link #exec}; its output log keeps the
   * call's {@code maxOutputBytes}, or this runner's default, dropping the oldest output beyond it.
   */
  @Override
  public ProcessSession start(ProcessSpec spec) {
    return sessions.start(spec);
  }

  @Override
  public List<ProcessInfo> list() {
    return sessions.list();
  }

  @Override
  public void terminate(String id) {
    sessions.terminate(id);
  }

  private ProcessSession startSession(ProcessSpec spec) {
    ExecRequest request = EngineSession.request(spec);
    ExecOptions opts = request.options();
    checkPolicy(opts);
    WorkDir workDir = ExecOutcomes.workDir(root, request.command(), opts);
    return EngineSession.start(
        spec,
        workDir,
        opts.env().apply(hostEnvironment.entries()),
        guardFor(request.command(), opts),
        ExecOutcomes.outputCap(opts, defaultMaxOutputBytes),
        () -> {});
  }

  private void checkPolicy(ExecOptions opts) {
    NativeAccess.unavailabilityCause()
        .ifPresent(
            why -> {
              throw new SandboxException(Kind.NOT_AVAILABLE, "sandbox: " + why);
            });
    if (opts.net().mode() != NetMode.DEFAULT) {
      throw new SandboxException(
          Kind.NOT_AVAILABLE,
          "sandbox: net policy "
              + opts.net().mode()
              + " not supported by local runner; requires a kernel-level isolation backend");
    }
    ExecPolicy.validate(opts, enforcement());
  }

  private TreeGuard guardFor(String cmd, ExecOptions opts) {
    ResourceLimits r = opts.resources();
    boolean capped =
        r.memoryBytes() > 0
            || r.maxProcesses() > 0
            || r.cpuMillicores() > 0
            || r.cpuThrottleMillicores() > 0;
    long budget = 0;
    if (r.cpuMillicores() > 0) {
      // The seed's budget: timeout x millicores / 1000, saturating.
      double nanos = (double) opts.timeout().toNanos() * r.cpuMillicores() / 1000.0;
      budget = nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) nanos;
    }
    try {
      if (!capped) {
        return tracker();
      }
      if (sampler) {
        return new SamplerGuard(
            r.memoryBytes(),
            budget,
            tracking.cgroups() == null
                ? null
                : new CgroupGuard(tracking.cgroups(), TreeLimits.NONE));
      }
      return new CgroupGuard(
          cgroups,
          new TreeLimits(r.memoryBytes(), r.maxProcesses(), r.cpuThrottleMillicores(), budget));
    } catch (EngineException e) {
      throw new SandboxException(
          Kind.NOT_AVAILABLE,
          "sandbox: exec "
              + cmd
              + ": "
              + (capped ? "resource caps" : "tracking the process tree")
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** The guard of an exec without caps: its tree held as well as this host allows. */
  private TreeGuard tracker() {
    if (tracking.cgroups() != null) {
      return new CgroupGuard(tracking.cgroups(), TreeLimits.NONE);
    }
    return tracking.sampler() ? new SamplerGuard(0, 0) : TreeGuard.NONE;
  }

  @Override
  public String toString() {
    return "LocalRunner[root=" + root + "]";
  }

  /** Builds a {@link LocalRunner}. */
  public static final class Builder {
    private final String rootDir;
    private long maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES;
    private CapsMechanism caps = CapsMechanism.AUTO;
    private String cgroupParent;
    private Supplier<Map<String, String>> hostEnvironment = HostEnvironment::ofThisProcess;

    private Builder(String rootDir) {
      this.rootDir = rootDir;
    }

    /**
     * The capture cap per stream when a call does not set one; zero or negative means no cap of its
     * own: the most this JVM can capture (see {@link ResourceLimits#maxOutputBytes()}).
     */
    public Builder maxOutputBytes(long maxOutputBytes) {
      this.maxOutputBytes = maxOutputBytes > 0 ? maxOutputBytes : Long.MAX_VALUE;
      return this;
    }

    /**
     * How memory, CPU and process caps are enforced, and how every tree is tracked (default {@link
     * CapsMechanism#AUTO}).
     */
    public Builder caps(CapsMechanism caps) {
      this.caps = java.util.Objects.requireNonNull(caps, "caps");
      return this;
    }

    /**
     * A delegated cgroup v2 directory to create per-exec cgroups in, instead of this process's own
     * cgroup (which, holding the JVM, cannot delegate controllers on pure v2 hosts).
     */
    public Builder cgroupParent(String cgroupParent) {
      this.cgroupParent = cgroupParent;
      return this;
    }

    /** Where the host environment comes from (default: this JVM's); for tests. */
    Builder hostEnvironment(Supplier<Map<String, String>> hostEnvironment) {
      this.hostEnvironment = hostEnvironment;
      return this;
    }

    /**
     * The runner.
     *
     * @throws SandboxException VALIDATION when the root is null or empty
     */
    public LocalRunner build() {
      if (rootDir == null || rootDir.isEmpty()) {
        throw new SandboxException(Kind.VALIDATION, "sandbox: local runner root must be set");
      }
      Cgroups cgroups = null;
      String why = "caps disabled for this runner";
      boolean sampler = false;
      Tracking tracking = new Tracking(null, false, "the engine cannot run here");
      if (NativeAccess.isAvailable()) {
        boolean samplerWorks = SamplerGuard.available();
        switch (caps) {
          case PROC_SAMPLER -> {
            sampler = samplerWorks;
            why = sampler ? "the /proc sampler was chosen" : "/proc sampling does not work here";
            tracking = Tracking.of(null, samplerWorks, why);
          }
          case NONE -> {
            // No caps; the tree is tracked all the same, as AUTO would.
            Cgroups.Result r = Cgroups.probe(Cgroups.Version.AUTO, path(cgroupParent));
            tracking = Tracking.of(r.cgroups(), samplerWorks, r.whyNot());
          }
          default -> {
            Cgroups.Result r =
                Cgroups.probe(
                    switch (caps) {
                      case CGROUP_V1 -> Cgroups.Version.V1;
                      case CGROUP_V2 -> Cgroups.Version.V2;
                      default -> Cgroups.Version.AUTO;
                    },
                    path(cgroupParent));
            cgroups = r.cgroups();
            why = r.whyNot();
            tracking = Tracking.of(cgroups, samplerWorks, why);
            if (caps == CapsMechanism.AUTO
                && (cgroups == null || !cgroups.memory().available())
                && samplerWorks) {
              // The sampler caps memory; a cgroup that cannot still holds the tree.
              why =
                  cgroups == null
                      ? why
                      : "cgroups cannot cap memory here: " + cgroups.memory().detail();
              cgroups = null;
              sampler = true;
            }
          }
        }
      }
      return new LocalRunner(
          RootedPaths.resolveRoot(rootDir),
          maxOutputBytes,
          hostEnvironment,
          cgroups,
          why,
          sampler,
          tracking);
    }

    private static Path path(String p) {
      return p == null ? null : Path.of(p);
    }
  }
}
