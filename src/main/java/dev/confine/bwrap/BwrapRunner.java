package dev.confine.bwrap;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.CapsMechanism;
import dev.confine.Enforcement;
import dev.confine.EnforcementReporter;
import dev.confine.ExecOptions;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.host.Deadlines;
import dev.confine.host.ExecPolicy;
import dev.confine.host.HostEnvironment;
import dev.confine.host.HostExec;
import dev.confine.host.WorkDir;
import dev.confine.linux.Caps;
import dev.confine.linux.Engine;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Runs commands inside bubblewrap ({@code bwrap}, Debian's {@code bubblewrap}), the seed's Linux OS
 * sandbox (seed §10): each command gets a private mount namespace with the host read-only ({@code
 * --ro-bind / /}), the root and the writable paths writable at the same paths, a private {@code
 * /tmp}, a fresh {@code /proc} and a minimal {@code /dev}; a private PID namespace; exactly the
 * policy's environment ({@code --clearenv}, {@code --setenv}); under {@code DENY_ALL} a private
 * network namespace with only loopback and a private {@code /run} (the host daemons' sockets there
 * hidden). Beyond the seed: no capabilities ({@code --cap-drop ALL}, which matters as root: with
 * them a child could remount a read-only bind writable) and a new session ({@code --new-session}:
 * no controlling terminal, so {@code TIOCSTI} reaches none).
 *
 * <p>The bwrap process is spawned by Confine's engine like any command of the local runner, placed
 * in the tree's cgroup where one can be made, so memory, CPU, process caps and the tree kill hold
 * for everything inside; timeouts kill the whole tree; output is captured with the same cap.
 * bwrap's own failures (a command it cannot find or execute inside, a namespace it cannot make) are
 * its exit status, as in the seed, with its message on stderr.
 *
 * <p>Not yet: {@code ALLOW_LIST} and {@code PROXY} (the proxy bridge), the unix-socket allow-list,
 * MITM and sessions: each is NOT_AVAILABLE, said so, rather than run weaker.
 */
public final class BwrapRunner implements Runner, EnforcementReporter {
  private final BwrapSettings settings;
  private final Supplier<Map<String, String>> hostEnvironment;
  private final Caps caps;
  private final Enforcement enforcement;

  private BwrapRunner(
      BwrapSettings settings, Supplier<Map<String, String>> hostEnvironment, Caps caps) {
    this.settings = settings;
    this.hostEnvironment = hostEnvironment;
    this.caps = caps;
    this.enforcement =
        !Engine.availability().isAvailable()
            ? Enforcement.NONE
            : caps.enforcement(
                    Enforcement.builder()
                        .envAllowList(true)
                        .netModes(NetMode.DENY_ALL)
                        .filesystemBounds(true))
                .build();
  }

  /** A builder for a runner rooted at {@code rootDir}. */
  public static Builder builder(String rootDir) {
    return new Builder(rootDir);
  }

  /** The bwrap binary this runner runs. */
  public Path binary() {
    return settings.binary();
  }

  /** The root: absolute, and symlink-resolved when it exists. */
  public Path root() {
    return settings.root();
  }

  /** The writable paths beyond the root, resolved. */
  public List<String> writablePaths() {
    return settings.writablePaths();
  }

  @Override
  public Enforcement enforcement() {
    return enforcement;
  }

  @Override
  public List<Capability> capabilities() {
    List<Capability> rows = new ArrayList<>();
    String engine = Engine.availability().unavailabilityCause().orElse(null);
    String bwrap = engine != null ? engine : probe().orElse(null);
    if (bwrap != null) {
      for (Dimension d : Dimension.values()) {
        rows.add(new Capability(d, false, bwrap));
      }
      return rows;
    }
    rows.add(
        new Capability(
            Dimension.SPAWN,
            true,
            settings.binary()
                + " spawned through posix_spawn (FFM), reaped through pidfd + epoll; the command"
                + " is its child in a private PID namespace (--unshare-pid, --die-with-parent)"));
    rows.add(
        new Capability(
            Dimension.ENV, true, "--clearenv, then --setenv for each variable of the policy's"));
    rows.add(
        new Capability(
            Dimension.FILESYSTEM_BOUNDS,
            true,
            "private mount namespace: the host read-only (--ro-bind / /), the root and the"
                + " writable paths writable at the same paths, a private /tmp (tmpfs), a fresh"
                + " /proc and a minimal /dev"));
    rows.add(
        new Capability(
            Dimension.READ_ONLY_HOST,
            true,
            "always: every host path but the root, the writable paths and /tmp is a read-only bind"));
    rows.add(
        new Capability(
            Dimension.CAPABILITIES, true, "none: --cap-drop ALL (as root too), no_new_privs"));
    rows.add(new Capability(Dimension.NO_NEW_PRIVS, true, "set by bwrap before the exec"));
    rows.add(
        new Capability(
            Dimension.TERMINALS,
            true,
            "--new-session: no controlling terminal, so TIOCSTI cannot push input into the"
                + " caller's"));
    rows.add(
        new Capability(
            Dimension.OTHER_PROCESSES,
            true,
            "a private PID namespace: no host process is visible or can be signalled by pid"));
    rows.add(
        new Capability(
            Dimension.NET_DENY_ALL,
            true,
            "private network namespace (--unshare-net: only lo; abstract unix sockets are per"
                + " namespace) and a private /run (--tmpfs /run: the host daemons' sockets there"
                + " hidden); host unix sockets elsewhere on the filesystem (outside /run and /tmp)"
                + " stay reachable"));
    for (Dimension d : List.of(Dimension.NET_ALLOW_LIST, Dimension.NET_PROXY)) {
      rows.add(
          new Capability(d, false, "not built yet for bwrap: the proxy bridge into the sandbox"));
    }
    caps.addRows(
        rows,
        null,
        "the children cannot leave the cgroup: the host, the cgroup filesystem with it, is"
            + " read-only inside");
    rows.add(new Capability(Dimension.DISK, false, "no quota mechanism"));
    return rows;
  }

  /** Per binary: why it cannot make its namespaces here (empty: it can). Probed once. */
  private static final Map<Path, Probe> PROBES = new ConcurrentHashMap<>();

  private record Probe(Optional<String> whyNot) {}

  /** Why bwrap cannot make its namespaces here; empty when it can. */
  private Optional<String> probe() {
    return PROBES
        .computeIfAbsent(settings.binary(), b -> new Probe(Optional.ofNullable(probeOnce())))
        .whyNot();
  }

  private String probeOnce() {
    List<String> launch = new ArrayList<>();
    launch.add(settings.binary().toString());
    launch.addAll(
        List.of(
            "--die-with-parent",
            "--unshare-pid",
            "--unshare-net",
            "--ro-bind",
            "/",
            "/",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--",
            "/bin/true"));
    ExecOptions opts = ExecOptions.builder().timeout(Duration.ofSeconds(10)).build();
    ExecRequest request = ExecRequest.of(settings.binary().toString(), List.of(), opts);
    try {
      ExecResult r =
          HostExec.run(
              request,
              launch,
              WorkDir.check(settings.root(), request.command(), ""),
              List.of(),
              64 << 10,
              caps.guardFor(request.command(), opts),
              Deadlines.fromNow(opts.timeout()));
      return r.exitCode() == 0
          ? null
          : "bubblewrap cannot make its namespaces here: "
              + (r.stderrText().isBlank() ? "exit " + r.exitCode() : r.stderrText().strip());
    } catch (SandboxException e) {
      return "bubblewrap could not be run: " + e.getMessage();
    }
  }

  /**
   * Runs {@code command} inside bwrap. From a virtual thread the exec runs on a platform thread of
   * its own, which waits for it: {@code --die-with-parent} kills bwrap when the <em>thread</em>
   * that spawned it ends (PR_SET_PDEATHSIG), and a virtual thread's spawn is its carrier's, which
   * the scheduler may retire while the command runs.
   */
  @Override
  public ExecResult exec(String command, List<String> args, ExecOptions options) {
    if (!Thread.currentThread().isVirtual()) {
      return execHere(command, args, options);
    }
    ExecResult[] result = new ExecResult[1];
    RuntimeException[] failure = new RuntimeException[1];
    Thread t =
        Thread.ofPlatform()
            .name("confine-bwrap-exec")
            .daemon()
            .start(
                () -> {
                  try {
                    result[0] = execHere(command, args, options);
                  } catch (RuntimeException e) {
                    failure[0] = e;
                  }
                });
    boolean interrupted = false;
    while (true) {
      try {
        t.join();
        break;
      } catch (InterruptedException e) {
        interrupted = true; // the exec ends by its own deadline; its thread must not be left
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (failure[0] != null) {
      throw failure[0];
    }
    return result[0];
  }

  private ExecResult execHere(String command, List<String> args, ExecOptions options) {
    ExecRequest request = ExecRequest.of(command, args, options);
    ExecOptions opts = request.options();
    String cmd = request.command();
    long deadline = opts.hasTimeout() ? Deadlines.fromNow(opts.timeout()) : Long.MAX_VALUE;
    checkPolicy(opts);
    WorkDir workDir = WorkDir.check(settings.root(), cmd, opts.workDir());
    List<String> argv = new ArrayList<>();
    argv.add(cmd);
    argv.addAll(request.args());
    List<String> launch = new ArrayList<>();
    launch.add(settings.binary().toString());
    launch.addAll(launchLine(opts, workDir, argv));
    // bwrap starts in the command's work dir (which its --chdir names too); its own environment
    // is empty: it reads none, and the child's is set by its flags.
    return HostExec.run(
        request,
        launch,
        workDir,
        List.of(),
        HostExec.outputCap(opts, settings.defaultMaxOutputBytes()),
        caps.guardFor(cmd, opts),
        deadline);
  }

  /**
   * bwrap's arguments for {@code command} under {@code opts}: the extra flags, the policy's
   * (working directory, environment, network), the hardening, the filesystem's, {@code --}, the
   * command.
   */
  private List<String> launchLine(ExecOptions opts, WorkDir workDir, List<String> command) {
    ExecOptions resolved = opts.toBuilder().workDir(workDir.shown()).build();
    List<String> policy = new ArrayList<>(BwrapFlags.buildFlags(resolved, hostEnvironment.get()));
    policy.addAll(BwrapFlags.hardeningFlags());
    List<String> filesystem =
        new ArrayList<>(
            BwrapFlags.filesystemFlags(settings.root().toString(), settings.writablePaths()));
    filesystem.addAll(BwrapFlags.netIsolationFlags(opts.net().mode()));
    return BwrapFlags.commandLine(settings.extraFlags(), policy, filesystem, command);
  }

  private void checkPolicy(ExecOptions opts) {
    Engine.availability().ensureAvailable();
    NetMode mode = opts.net().mode();
    if (mode == NetMode.ALLOW_LIST || mode == NetMode.PROXY) {
      throw SandboxException.of(
          Kind.NOT_AVAILABLE,
          "bwrap: net policy "
              + mode
              + " is not built yet for the bubblewrap runner (the proxy bridge); use the"
              + " confined runner");
    }
    ExecPolicy.validate(opts, enforcement);
  }

  @Override
  public String toString() {
    return "BwrapRunner[binary=" + settings.binary() + ", root=" + settings.root() + "]";
  }

  /** Builds a {@link BwrapRunner}. */
  public static final class Builder {
    private final String rootDir;
    private String binary;
    private List<String> writablePaths = List.of();
    private List<String> extraFlags = List.of();
    private CapsMechanism caps = CapsMechanism.AUTO;
    private String cgroupParent;
    private long maxOutputBytes;
    private Supplier<Map<String, String>> hostEnvironment = HostEnvironment::ofThisProcess;

    private Builder(String rootDir) {
      this.rootDir = rootDir;
    }

    /** The bwrap binary (default: {@code bwrap} found on the PATH). */
    public Builder binary(String binary) {
      this.binary = binary;
      return this;
    }

    /** Paths beyond the root the commands may write, at the same paths inside. */
    public Builder writablePaths(String... paths) {
      this.writablePaths = List.of(paths);
      return this;
    }

    /**
     * Flags passed to bwrap first ({@code --die-with-parent}, {@code --level-prefix}, ...); a flag
     * that could weaken the policy ({@code --bind}, {@code --share-net}, {@code --cap-add}, ...) is
     * refused with VALIDATION.
     */
    public Builder extraFlags(String... flags) {
      this.extraFlags = List.of(flags);
      return this;
    }

    /** How caps are enforced and trees tracked (default {@link CapsMechanism#AUTO}). */
    public Builder caps(CapsMechanism caps) {
      this.caps = Objects.requireNonNull(caps, "caps");
      return this;
    }

    /**
     * A delegated cgroup v2 directory to create per-exec cgroups in (see {@code
     * LocalRunner.Builder.cgroupParent}).
     */
    public Builder cgroupParent(String cgroupParent) {
      this.cgroupParent = cgroupParent;
      return this;
    }

    /**
     * The capture cap per stream when a call does not set one (default 10 MiB); zero or negative:
     * the most this JVM can capture.
     */
    public Builder maxOutputBytes(long maxOutputBytes) {
      this.maxOutputBytes = maxOutputBytes;
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
     * @throws SandboxException as the seed's {@code New}: VALIDATION for a weakening extra flag, a
     *     root that is not set or a writable path that does not exist; NOT_AVAILABLE when there is
     *     no bwrap to run, or a {@link #cgroupParent} is given and the trees would not be made
     *     beneath it
     */
    public BwrapRunner build() {
      BwrapSettings settings = BwrapSettings.resolve(rootDir, binary, writablePaths, extraFlags);
      if (maxOutputBytes != 0) {
        settings =
            new BwrapSettings(
                settings.binary(),
                settings.root(),
                settings.writablePaths(),
                settings.extraFlags(),
                maxOutputBytes > 0 ? maxOutputBytes : Long.MAX_VALUE);
      }
      Caps plan =
          Engine.availability().isAvailable()
              ? Caps.of(caps, cgroupParent)
              : Caps.unavailable("the engine cannot run here");
      return new BwrapRunner(settings, hostEnvironment, plan);
    }
  }
}
