package dev.confine.local;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.CapsMechanism;
import dev.confine.Enforcement;
import dev.confine.EnforcementReporter;
import dev.confine.ExecOptions;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.ResourceLimits;
import dev.confine.RootedPaths;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.host.Deadlines;
import dev.confine.host.ExecPolicy;
import dev.confine.host.HostEnvironment;
import dev.confine.host.HostExec;
import dev.confine.host.HostSession;
import dev.confine.host.ProcessRegistry;
import dev.confine.host.WorkDir;
import dev.confine.linux.Caps;
import dev.confine.linux.Engine;
import dev.confine.session.ProcessInfo;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
  private final Path root;
  private final long defaultMaxOutputBytes;
  private final HostEnvironment hostEnvironment;
  private final Caps caps;
  private final Enforcement enforcement;
  private final ProcessRegistry sessions = new ProcessRegistry(this::startSession);

  private LocalRunner(
      Path root,
      long defaultMaxOutputBytes,
      Supplier<Map<String, String>> hostEnvironment,
      Caps caps) {
    this.root = root;
    this.defaultMaxOutputBytes = defaultMaxOutputBytes;
    this.hostEnvironment = new HostEnvironment(hostEnvironment);
    this.caps = caps;
    this.enforcement =
        !Engine.availability().isAvailable()
            ? Enforcement.NONE
            : caps.enforcement(Enforcement.builder().envAllowList(true)).build();
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
  @Override
  public List<Capability> capabilities() {
    List<Capability> rows = new ArrayList<>();
    String engine = Engine.availability().unavailabilityCause().orElse(null);
    rows.add(
        engine == null
            ? new Capability(
                Dimension.SPAWN, true, "posix_spawn through FFM; pidfd + epoll reaping")
            : new Capability(Dimension.SPAWN, false, engine));
    rows.add(
        new Capability(
            Dimension.ENV, engine == null, engine == null ? "explicit environment" : engine));
    for (Dimension d :
        List.of(Dimension.NET_DENY_ALL, Dimension.NET_ALLOW_LIST, Dimension.NET_PROXY)) {
      rows.add(
          new Capability(
              d, false, "the local runner has no network isolation; use a confining backend"));
    }
    caps.addRows(
        rows,
        engine,
        "a child that may write the cgroup filesystem (root, as this runner does not bound"
            + " writes) can move itself out of its cgroup");
    rows.add(new Capability(Dimension.DISK, false, "no quota mechanism"));
    rows.add(
        new Capability(
            Dimension.FILESYSTEM_BOUNDS,
            false,
            "the local runner does not confine writes; use a confining backend"));
    return rows;
  }

  @Override
  public ExecResult exec(String command, List<String> args, ExecOptions options) {
    ExecRequest request = ExecRequest.of(command, args, options);
    ExecOptions opts = request.options();
    String cmd = request.command();
    long deadline = opts.hasTimeout() ? Deadlines.fromNow(opts.timeout()) : Long.MAX_VALUE;

    checkPolicy(opts);
    WorkDir workDir = WorkDir.check(root, cmd, opts.workDir());
    List<String> env = opts.env().apply(hostEnvironment.entries());
    return HostExec.run(
        request,
        workDir,
        env,
        HostExec.outputCap(opts, defaultMaxOutputBytes),
        caps.guardFor(cmd, opts),
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
    ExecRequest request = HostSession.request(spec);
    ExecOptions opts = request.options();
    checkPolicy(opts);
    WorkDir workDir = WorkDir.check(root, request.command(), opts.workDir());
    return HostSession.start(
        spec,
        workDir,
        opts.env().apply(hostEnvironment.entries()),
        caps.guardFor(request.command(), opts),
        HostExec.outputCap(opts, defaultMaxOutputBytes),
        () -> {});
  }

  private void checkPolicy(ExecOptions opts) {
    Engine.availability().ensureAvailable();
    if (opts.net().mode() != NetMode.DEFAULT) {
      throw SandboxException.of(
          Kind.NOT_AVAILABLE,
          "net policy "
              + opts.net().mode()
              + " not supported by local runner; requires a kernel-level isolation backend");
    }
    ExecPolicy.validate(opts, enforcement());
  }

  @Override
  public String toString() {
    return "LocalRunner[root=" + root + "]";
  }

  /** Builds a {@link LocalRunner}. */
  public static final class Builder {
    private final String rootDir;
    private long maxOutputBytes = HostExec.DEFAULT_MAX_OUTPUT_BYTES;
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
      this.caps = Objects.requireNonNull(caps, "caps");
      return this;
    }

    /**
     * A delegated cgroup v2 directory to create per-exec cgroups in, instead of this process's own
     * cgroup (which, holding the JVM, cannot delegate controllers on pure v2 hosts). When it cannot
     * be used (not a usable v2 cgroup, or the caps mechanism chosen is not cgroup v2), {@link
     * #build()} refuses instead of putting the trees elsewhere.
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
     * @throws SandboxException VALIDATION when the root is null or empty; NOT_AVAILABLE when a
     *     {@link #cgroupParent} is given and the trees would not be made beneath it
     */
    public LocalRunner build() {
      if (rootDir == null || rootDir.isEmpty()) {
        throw SandboxException.of(Kind.VALIDATION, "local runner root must be set");
      }
      Caps plan =
          Engine.availability().isAvailable()
              ? Caps.of(caps, cgroupParent)
              : Caps.unavailable("the engine cannot run here");
      return new LocalRunner(
          RootedPaths.resolveRoot(rootDir), maxOutputBytes, hostEnvironment, plan);
    }
  }
}
