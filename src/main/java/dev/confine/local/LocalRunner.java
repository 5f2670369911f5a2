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
 * root, the environment follows the {@link dev.confine.EnvPolicy}, output is capped per stream and
 * the whole process group is killed on timeout or interrupt. Network policies other than {@link
 * NetMode#DEFAULT} and resource caps are refused with NOT_AVAILABLE: this runner cannot enforce
 * them.
 *
 * <p>Unlike the seed, when {@code exec} returns nothing it started is left running: a leader that
 * exits while a background child still holds its output gets at most the 2 s drain, then the rest
 * of its process group is killed, and {@link ExecResult#leftoversKilled()} says so.
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
  private final Enforcement enforcement;
  private final ProcessRegistry sessions = new ProcessRegistry(this::startSession);

  private LocalRunner(
      Path root,
      long defaultMaxOutputBytes,
      Supplier<Map<String, String>> hostEnvironment,
      Cgroups cgroups,
      String noCgroupsReason,
      boolean sampler) {
    this.root = root;
    this.sampler = sampler;
    this.defaultMaxOutputBytes = defaultMaxOutputBytes;
    this.hostEnvironment = new HostEnvironment(hostEnvironment);
    this.cgroups = cgroups;
    this.noCgroupsReason = noCgroupsReason;
    this.enforcement =
        !NativeAccess.isAvailable()
            ? Enforcement.NONE
            : Enforcement.builder()
                .envAllowList(true)
                .memoryCap(sampler || (cgroups != null && cgroups.memory().available()))
                .cpuCap(sampler || (cgroups != null && cgroups.cpuAccounting().available()))
                .pidsCap(cgroups != null && cgroups.pids().available())
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
              + " samples and a process that leaves the session unseen escapes (no usable cgroups: "
              + noCgroupsReason
              + ")";
      rows.add(new HostCapability("memory", true, "aggregate RSS from " + how));
      rows.add(new HostCapability("cpu", true, "budget from user+system time, " + how));
      rows.add(new HostCapability("pids", false, "needs cgroups: " + noCgroupsReason));
      rows.add(
          new HostCapability(
              "tree kill", false, "process group only (needs cgroups): " + noCgroupsReason));
    } else if (cgroups == null) {
      String why = engine != null ? engine : noCgroupsReason;
      for (String d : List.of("memory", "cpu", "pids", "tree kill")) {
        rows.add(new HostCapability(d, false, why));
      }
    } else {
      rows.add(row("memory", cgroups.memory()));
      Cgroups.Capability cpu = cgroups.cpuAccounting();
      Cgroups.Capability throttle = cgroups.cpuThrottle();
      rows.add(
          new HostCapability(
              "cpu",
              cpu.available(),
              cpu.available()
                  ? "budget from "
                      + cpu.detail()
                      + (throttle.available()
                          ? "; throttled by " + throttle.detail()
                          : "; no throttle: " + throttle.detail())
                  : cpu.detail()));
      rows.add(row("pids", cgroups.pids()));
      rows.add(row("tree kill", cgroups.treeKill()));
    }
    rows.add(new HostCapability("disk", false, "no quota mechanism"));
    rows.add(
        new HostCapability(
            "filesystem bounds",
            false,
            "the local runner does not confine writes; use a confining backend"));
    return rows;
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
    if (r.memoryBytes() == 0 && r.maxProcesses() == 0 && r.cpuMillicores() == 0) {
      return TreeGuard.NONE;
    }
    long budget = 0;
    if (r.cpuMillicores() > 0) {
      // The seed's budget: timeout x millicores / 1000, saturating.
      double nanos = (double) opts.timeout().toNanos() * r.cpuMillicores() / 1000.0;
      budget = nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) nanos;
    }
    if (sampler) {
      return new SamplerGuard(r.memoryBytes(), budget);
    }
    TreeLimits limits =
        new TreeLimits(r.memoryBytes(), r.maxProcesses(), r.cpuMillicores(), budget);
    try {
      return new CgroupGuard(cgroups, limits);
    } catch (EngineException e) {
      throw new SandboxException(
          Kind.NOT_AVAILABLE, "sandbox: exec " + cmd + ": resource caps: " + e.getMessage(), e);
    }
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

    /** How memory, CPU and process caps are enforced (default {@link CapsMechanism#AUTO}). */
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
      if (caps == CapsMechanism.PROC_SAMPLER && NativeAccess.isAvailable()) {
        sampler = SamplerGuard.available();
        why = sampler ? "the /proc sampler was chosen" : "/proc sampling does not work here";
      } else if (caps != CapsMechanism.NONE && NativeAccess.isAvailable()) {
        Cgroups.Result r =
            Cgroups.probe(
                switch (caps) {
                  case CGROUP_V1 -> Cgroups.Version.V1;
                  case CGROUP_V2 -> Cgroups.Version.V2;
                  default -> Cgroups.Version.AUTO;
                },
                cgroupParent == null ? null : Path.of(cgroupParent));
        cgroups = r.cgroups();
        why = r.whyNot();
        if (caps == CapsMechanism.AUTO
            && (cgroups == null || !cgroups.memory().available())
            && SamplerGuard.available()) {
          why =
              cgroups == null
                  ? why
                  : "cgroups cannot cap memory here: " + cgroups.memory().detail();
          cgroups = null;
          sampler = true;
        }
      }
      return new LocalRunner(
          RootedPaths.resolveRoot(rootDir), maxOutputBytes, hostEnvironment, cgroups, why, sampler);
    }
  }
}
