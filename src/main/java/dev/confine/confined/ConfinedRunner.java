package dev.confine.confined;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

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
import dev.confine.linux.ConfinementException;
import dev.confine.linux.ConfinementThreads;
import dev.confine.linux.ConfinementThreads.Confinement;
import dev.confine.linux.ConfinementThreads.Network;
import dev.confine.linux.Directories;
import dev.confine.linux.Landlock;
import dev.confine.linux.NativeAccess;
import dev.confine.linux.SeccompNetDeny;
import dev.confine.linux.ThreadNamespaces;
import dev.confine.local.EngineSession;
import dev.confine.local.ExecOutcomes;
import dev.confine.local.HostCapability;
import dev.confine.local.HostEnvironment;
import dev.confine.local.LocalRunner;
import dev.confine.local.WorkDir;
import dev.confine.session.ProcessInfo;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessRegistry;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Runs commands as host processes, like {@link LocalRunner}, confined by the kernel without a
 * helper binary, rootless, with more as root:
 *
 * <ul>
 *   <li>Filesystem write bounds (Landlock, at the highest ABI the kernel offers): writes, file
 *       creation, removal, links and renames (refer), truncation and device ioctls are allowed only
 *       beneath the root, the {@linkplain Builder#writablePaths writable paths}, {@code /dev/null},
 *       {@code /dev/tty}, {@code /dev/pts} and a private scratch directory passed as {@code TMPDIR}
 *       (one per exec in flight, emptied afterwards and then reused). Reads and execution stay
 *       open. On Landlock ABI 6 and newer the children also cannot signal processes outside their
 *       domain (the JVM) or connect to its abstract unix sockets.
 *   <li>{@link NetMode#DENY_ALL}: a seccomp filter refuses {@code socket} for AF_INET, AF_INET6 and
 *       AF_PACKET (EACCES) and {@code io_uring_setup} (EPERM); AF_UNIX keeps working. As root
 *       (unless {@linkplain Builder#rootless rootless} is forced) the children get a private
 *       network namespace instead, with only loopback, up: they see only {@code lo}, can serve and
 *       connect on it, and reach nothing else; the filter still refuses AF_PACKET sockets, io_uring
 *       and the x32 ABI.
 *   <li>{@linkplain Builder#readOnlyHost Read-only host} (root, on request): a private mount
 *       namespace in which every mount is read-only except the writable paths, so that what
 *       Landlock does not cover (chmod, chown, extended attributes, timestamps) is refused outside
 *       them too (EROFS).
 * </ul>
 *
 * <p>With namespaces the children also lose CAP_SYS_ADMIN from their bounding set, so a child
 * running as root cannot {@code setns} back into the host's namespaces or remount.
 *
 * <p>Both mechanisms need no_new_privs: <b>setuid and file-capability programs (sudo, su, ping on
 * some systems) lose their privileges inside</b>. ALLOW_LIST and PROXY need the network proxy and
 * are NOT_AVAILABLE; memory, CPU and process caps are NOT_AVAILABLE in this version (see {@link
 * #exec}). A host without Landlock runs nothing (NOT_AVAILABLE, with the reason). {@link
 * #capabilities()} says which mechanism holds on this host and why the others do not.
 *
 * <p>It manages sessions ({@link ProcessManager}) under the same confinement as its execs; a
 * session's private TMPDIR lives until the session is closed.
 *
 * <p>The confinement is applied to dedicated confinement threads (one per distinct confinement, at
 * most {@value ConfinementThreads#MAX_LIVE}), which only spawn: the rest of the JVM is unaffected.
 * Thread-safe.
 */
public final class ConfinedRunner implements Runner, EnforcementReporter, ProcessManager {
  private static final List<String> DEVICES = List.of("/dev/null", "/dev/tty", "/dev/pts");

  private final Path root;
  private final List<String> writablePaths;
  private final boolean rootless;
  private final boolean readOnlyHost;
  private final Path scratch;
  private final long defaultMaxOutputBytes;
  private final HostEnvironment hostEnvironment;
  private final Enforcement enforcement;
  private final AtomicLong execs = new AtomicLong();
  private final ConcurrentLinkedDeque<Path> idleScratch = new ConcurrentLinkedDeque<>();
  // Built once per network: sorting the paths cost ~18 us per exec.
  private final Map<Network, Confinement> confinements =
      Collections.synchronizedMap(new EnumMap<>(Network.class));
  private final ProcessRegistry sessions = new ProcessRegistry(this::startSession);

  private ConfinedRunner(
      Path root,
      List<String> writablePaths,
      boolean rootless,
      boolean readOnlyHost,
      Path scratch,
      long defaultMaxOutputBytes,
      Supplier<Map<String, String>> hostEnvironment) {
    this.root = root;
    this.writablePaths = writablePaths;
    this.rootless = rootless;
    this.readOnlyHost = readOnlyHost;
    this.scratch = scratch;
    this.defaultMaxOutputBytes = defaultMaxOutputBytes;
    this.hostEnvironment = new HostEnvironment(hostEnvironment);
    boolean landlock = NativeAccess.isAvailable() && Landlock.abi() > 0;
    this.enforcement =
        !NativeAccess.isAvailable()
            ? Enforcement.NONE
            : Enforcement.builder()
                .envAllowList(true)
                .filesystemBounds(landlock)
                .netModes(
                    landlock && SeccompNetDeny.isAvailable()
                        ? new NetMode[] {NetMode.DENY_ALL}
                        : new NetMode[0])
                .build();
  }

  /** A builder for a runner rooted at {@code rootDir}. */
  public static Builder builder(String rootDir) {
    return new Builder(rootDir);
  }

  /** The root: absolute, and symlink-resolved when it exists. */
  public Path root() {
    return root;
  }

  /** The writable paths beyond the root, resolved. */
  public List<String> writablePaths() {
    return writablePaths;
  }

  /** Whether the rootless mechanisms are forced (no namespaces, even as root). */
  public boolean rootless() {
    return rootless;
  }

  /** Whether the host is to be read-only outside the writable paths (needs root). */
  public boolean readOnlyHost() {
    return readOnlyHost;
  }

  /**
   * How {@link NetMode#DENY_ALL} is enforced here: a private network namespace as root (unless
   * rootless is forced), else the seccomp filter.
   */
  Network denyAllNetwork() {
    return !rootless && ThreadNamespaces.networkUnavailabilityCause().isEmpty()
        ? Network.NAMESPACE
        : Network.SECCOMP;
  }

  /**
   * Environment allow-list; filesystem bounds where Landlock works; {@link NetMode#DENY_ALL} where
   * Landlock and seccomp filters both work. No resource caps. Which mechanisms hold, and why the
   * others do not: {@link #capabilities()}.
   */
  @Override
  public Enforcement enforcement() {
    return enforcement;
  }

  /**
   * Every dimension, whether it holds for this runner on this host, and by which mechanism or why
   * not: filesystem bounds (the Landlock ABI), signal scoping, the network modes (a namespace or
   * seccomp, and why not a namespace), the read-only host, no_new_privs and its consequence, caps.
   */
  public List<HostCapability> capabilities() {
    List<HostCapability> rows = new ArrayList<>();
    String engine = NativeAccess.unavailabilityCause().orElse(null);
    if (engine != null) {
      for (String d :
          List.of(
              "spawn",
              "env",
              "filesystem bounds",
              "signal scoping",
              "net deny_all",
              "net allow_list",
              "net proxy",
              "read-only host",
              "no_new_privs",
              "memory",
              "cpu",
              "pids",
              "tree kill",
              "disk")) {
        rows.add(new HostCapability(d, false, engine));
      }
      return rows;
    }
    String noLandlock =
        Landlock.unavailabilityCause().map(w -> "needs Landlock: " + w).orElse(null);
    int abi = Landlock.abi();
    rows.add(
        new HostCapability(
            "spawn",
            noLandlock == null,
            noLandlock == null
                ? "posix_spawn through FFM on a dedicated confinement thread; pidfd + epoll reaping"
                : "nothing runs without Landlock: " + noLandlock));
    rows.add(new HostCapability("env", true, "explicit environment"));
    rows.add(
        noLandlock != null
            ? new HostCapability("filesystem bounds", false, noLandlock)
            : new HostCapability(
                "filesystem bounds",
                true,
                "Landlock ABI "
                    + abi
                    + ": writes only beneath the root, the writable paths, /dev/null, /dev/tty,"
                    + " /dev/pts and a private TMPDIR"
                    + (abi >= 2 ? "; links and renames across the bound refused" : "")
                    + (abi >= 3 ? "; truncation" : "; truncation NOT covered (needs ABI 3)")
                    + (abi >= 5 ? "; device ioctls" : "; device ioctls NOT covered (needs ABI 5)")
                    + "; reads and execution open"));
    rows.add(
        noLandlock != null
            ? new HostCapability("signal scoping", false, noLandlock)
            : abi >= 6
                ? new HostCapability(
                    "signal scoping",
                    true,
                    "Landlock ABI "
                        + abi
                        + ": children cannot signal processes outside their domain (the JVM) or"
                        + " connect to its abstract unix sockets")
                : new HostCapability(
                    "signal scoping",
                    false,
                    "needs Landlock ABI 6 (this kernel has "
                        + abi
                        + "): children can signal the JVM"));
    rows.add(netDenyRow(noLandlock));
    for (NetMode m : List.of(NetMode.ALLOW_LIST, NetMode.PROXY)) {
      rows.add(
          new HostCapability(
              "net " + m.name().toLowerCase(Locale.ROOT),
              false,
              "needs the network proxy (not built yet)"));
    }
    rows.add(readOnlyHostRow(noLandlock));
    rows.add(
        noLandlock != null
            ? new HostCapability("no_new_privs", false, noLandlock)
            : new HostCapability(
                "no_new_privs",
                true,
                "set for every child (Landlock and seccomp need it): setuid and file-capability"
                    + " programs (sudo, su, some pings) run without their privileges"));
    String caps =
        "not with the confined runner yet (v1 cgroup placement has the spawning thread write cgroup"
            + " files, which its Landlock domain forbids)";
    for (String d : List.of("memory", "cpu", "pids")) {
      rows.add(new HostCapability(d, false, caps));
    }
    rows.add(
        new HostCapability(
            "tree kill", false, "process group only (the confined runner uses no cgroups yet)"));
    rows.add(new HostCapability("disk", false, "no quota mechanism"));
    return rows;
  }

  private HostCapability netDenyRow(String noLandlock) {
    if (noLandlock != null) {
      return new HostCapability("net deny_all", false, noLandlock);
    }
    Optional<String> noSeccomp = SeccompNetDeny.unavailabilityCause();
    if (noSeccomp.isPresent()) {
      return new HostCapability("net deny_all", false, "needs seccomp: " + noSeccomp.get());
    }
    if (denyAllNetwork() == Network.NAMESPACE) {
      return new HostCapability(
          "net deny_all",
          true,
          "private network namespace (only lo, up; loopback works inside); seccomp refuses"
              + " AF_PACKET sockets, io_uring and the x32 ABI; children lose CAP_SYS_ADMIN, so"
              + " they cannot setns out; unix sockets on the filesystem (host daemons') stay"
              + " reachable");
    }
    String whyNoNamespace =
        rootless
            ? "rootless forced"
            : ThreadNamespaces.networkUnavailabilityCause().orElse("unavailable");
    return new HostCapability(
        "net deny_all",
        true,
        "seccomp: AF_INET, AF_INET6 and AF_PACKET sockets refused (EACCES, loopback too),"
            + " io_uring (EPERM) and the x32 ABI; AF_UNIX works (host daemons' sockets stay"
            + " reachable); no network namespace ("
            + whyNoNamespace
            + ")");
  }

  private HostCapability readOnlyHostRow(String noLandlock) {
    if (noLandlock != null) {
      return new HostCapability("read-only host", false, noLandlock);
    }
    if (rootless) {
      return new HostCapability(
          "read-only host", false, "needs a private mount namespace (root); rootless forced");
    }
    Optional<String> cause = ThreadNamespaces.mountUnavailabilityCause();
    if (cause.isPresent()) {
      return new HostCapability(
          "read-only host", false, "needs a private mount namespace: " + cause.get());
    }
    if (!readOnlyHost) {
      return new HostCapability(
          "read-only host",
          false,
          "not requested (readOnlyHost(true), --read-only-host); available here");
    }
    return new HostCapability(
        "read-only host",
        true,
        "private mount namespace: every mount read-only (EROFS) except the writable paths, which"
            + " also refuses the chmod, chown, xattr and timestamp changes Landlock does not cover;"
            + " links and renames between different writable paths fail with EXDEV");
  }

  /**
   * Runs {@code command} as {@link LocalRunner#exec} does, under the confinement.
   *
   * @throws SandboxException NOT_AVAILABLE when Landlock is unavailable, when the host is to be
   *     read-only and this JVM cannot make a private mount namespace (not root), for ALLOW_LIST and
   *     PROXY (they need the network proxy, not built yet), for DENY_ALL without seccomp, and for
   *     memory, CPU and process caps: v1 cgroup placement has the spawning thread write cgroup
   *     files, which its Landlock domain forbids, and the caps are not wired to confinement threads
   *     yet
   */
  @Override
  public ExecResult exec(String command, List<String> args, ExecOptions options) {
    ExecRequest request = ExecRequest.of(command, args, options);
    ExecOptions opts = request.options();
    String cmd = request.command();
    long deadline =
        opts.hasTimeout()
            ? ExecOutcomes.saturatedDeadline(System.nanoTime(), opts.timeout())
            : Long.MAX_VALUE;
    Confinement confinement = confinement(checkPolicy(opts));
    WorkDir workDir = ExecOutcomes.workDir(root, cmd, opts);
    Path tmp = takeScratch(cmd);
    try {
      try {
        return ExecOutcomes.run(
            request,
            workDir,
            environment(opts, tmp),
            ExecOutcomes.outputCap(opts, defaultMaxOutputBytes),
            ConfinementThreads.guard(confinement),
            deadline);
      } catch (ConfinementException e) {
        throw notApplied(cmd, e);
      }
    } finally {
      giveBackScratch(tmp);
    }
  }

  /**
   * Starts a session under the same confinement and checks as {@link #exec}; its private TMPDIR
   * lives until the session is closed.
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
    String cmd = request.command();
    Confinement confinement = confinement(checkPolicy(opts));
    WorkDir workDir = ExecOutcomes.workDir(root, cmd, opts);
    Path tmp = takeScratch(cmd);
    try {
      return EngineSession.start(
          spec,
          workDir,
          environment(opts, tmp),
          s -> ConfinementThreads.spawn(confinement, s),
          ExecOutcomes.outputCap(opts, defaultMaxOutputBytes),
          () -> giveBackScratch(tmp));
    } catch (ConfinementException e) {
      giveBackScratch(tmp);
      throw notApplied(cmd, e);
    } catch (RuntimeException e) {
      giveBackScratch(tmp);
      throw e;
    }
  }

  /** Refuses what this host cannot enforce; the network the children get. */
  private Network checkPolicy(ExecOptions opts) {
    NativeAccess.unavailabilityCause()
        .ifPresent(
            why -> {
              throw unavailable(why);
            });
    Optional<String> noLandlock = Landlock.unavailabilityCause();
    if (noLandlock.isPresent()) {
      throw unavailable("filesystem bounds need Landlock: " + noLandlock.get());
    }
    if (readOnlyHost) {
      ThreadNamespaces.mountUnavailabilityCause()
          .ifPresent(
              why -> {
                throw unavailable("a read-only host needs a private mount namespace: " + why);
              });
    }
    NetMode mode = opts.net().mode();
    Network network =
        switch (mode) {
          case DEFAULT -> Network.HOST;
          case DENY_ALL -> {
            SeccompNetDeny.unavailabilityCause()
                .ifPresent(
                    why -> {
                      throw unavailable("net policy DENY_ALL needs seccomp: " + why);
                    });
            yield denyAllNetwork();
          }
          case ALLOW_LIST, PROXY ->
              throw unavailable("net policy " + mode + " needs the network proxy (not built yet)");
        };
    ResourceLimits r = opts.resources();
    if (r.memoryBytes() > 0 || r.cpuMillicores() > 0 || r.maxProcesses() > 0) {
      throw unavailable(
          "resource caps are not available with the confined runner yet (v1 cgroup placement"
              + " has the spawning thread write cgroup files, which its Landlock domain forbids;"
              + " the placement thread is to move the confinement thread instead)");
    }
    ExecPolicy.validate(opts, enforcement);
    return network;
  }

  private List<String> environment(ExecOptions opts, Path tmp) {
    List<String> env = new ArrayList<>(opts.env().apply(hostEnvironment.entries()));
    env.removeIf(e -> e.startsWith("TMPDIR="));
    env.add("TMPDIR=" + tmp);
    return env;
  }

  private static SandboxException notApplied(String cmd, ConfinementException e) {
    return new SandboxException(
        Kind.NOT_AVAILABLE,
        "sandbox: exec " + cmd + ": the confinement could not be applied: " + e.getMessage(),
        e);
  }

  /**
   * An empty scratch directory for one exec: an idle one of an earlier exec, else a new one. Reuse
   * saves a mkdir and an rmdir per exec (about 0.25 ms on an ext4 /tmp mounted with discard, a
   * tenth of an exec).
   */
  private Path takeScratch(String cmd) {
    Path tmp = idleScratch.pollFirst();
    if (tmp != null) {
      return tmp;
    }
    tmp = scratch.resolve("exec-" + execs.incrementAndGet());
    try {
      Files.createDirectory(tmp);
    } catch (IOException e) {
      throw new SandboxException(
          Kind.INTERNAL, "sandbox: exec " + cmd + ": scratch directory " + tmp + ": " + e, e);
    }
    tmp.toFile().deleteOnExit(); // runs before the parent's, registered earlier
    return tmp;
  }

  /**
   * Empties {@code tmp} once its exec is over (nothing the exec started is running any more) and
   * keeps it for a later exec; a directory that cannot be emptied is not reused. The common case,
   * an exec that left nothing, costs one open and one getdents64.
   */
  private void giveBackScratch(Path tmp) {
    if (Directories.isEmpty(tmp) || emptyWithoutFollowing(tmp)) {
      idleScratch.addFirst(tmp);
    }
  }

  /**
   * Deletes what an exec left in {@code tmp} and says whether it is an empty directory now. Every
   * step is relative to an open directory and follows no symbolic link: the scratch parent is
   * writable by confined children (it holds every exec's TMPDIR), so a child may have replaced
   * {@code tmp} or anything beneath it with a link to where this unconfined JVM must not delete.
   * The parent itself cannot be replaced (its own parent is not writable to them).
   */
  private boolean emptyWithoutFollowing(Path tmp) {
    Path name = tmp.getFileName();
    try (DirectoryStream<Path> parent = Files.newDirectoryStream(scratch)) {
      if (!(parent instanceof SecureDirectoryStream<Path> sp)) {
        return false; // no openat on this platform: never reused, removed at exit
      }
      if (!isDirectory(sp, name)) {
        sp.deleteFile(name); // a link or file in its place: removed, the name not reused
        return false;
      }
      try (SecureDirectoryStream<Path> dir = sp.newDirectoryStream(name, NOFOLLOW_LINKS)) {
        deleteContents(dir, 0);
      }
      try (SecureDirectoryStream<Path> dir = sp.newDirectoryStream(name, NOFOLLOW_LINKS)) {
        return !dir.iterator().hasNext();
      }
    } catch (IOException | DirectoryIteratorException e) {
      return false;
    }
  }

  // Deeper trees are left (and the directory not reused): each level holds an open directory.
  private static final int MAX_SCRATCH_DEPTH = 64;

  private static void deleteContents(SecureDirectoryStream<Path> dir, int depth) {
    List<Path> names = new ArrayList<>();
    for (Path entry : dir) {
      names.add(entry.getFileName());
    }
    for (Path n : names) {
      try {
        if (isDirectory(dir, n)) {
          if (depth >= MAX_SCRATCH_DEPTH) {
            continue;
          }
          try (SecureDirectoryStream<Path> sub = dir.newDirectoryStream(n, NOFOLLOW_LINKS)) {
            deleteContents(sub, depth + 1);
          }
          dir.deleteDirectory(n);
        } else {
          dir.deleteFile(n);
        }
      } catch (IOException | DirectoryIteratorException e) {
        // best effort: what is left keeps the directory from being reused
      }
    }
  }

  private static boolean isDirectory(SecureDirectoryStream<Path> dir, Path name)
      throws IOException {
    return dir.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW_LINKS)
        .readAttributes()
        .isDirectory();
  }

  private Confinement confinement(Network network) {
    return confinements.computeIfAbsent(network, this::makeConfinement);
  }

  private Confinement makeConfinement(Network network) {
    List<String> writable = new ArrayList<>();
    writable.add(root.toString());
    writable.addAll(writablePaths);
    writable.add(scratch.toString());
    writable.addAll(DEVICES);
    return new Confinement(writable, network, readOnlyHost);
  }

  private static SandboxException unavailable(String why) {
    return new SandboxException(Kind.NOT_AVAILABLE, "sandbox: " + why);
  }

  @Override
  public String toString() {
    return "ConfinedRunner[root="
        + root
        + ", writable="
        + writablePaths
        + (rootless ? ", rootless" : "")
        + (readOnlyHost ? ", readOnlyHost" : "")
        + "]";
  }

  /** Builds a {@link ConfinedRunner}. */
  public static final class Builder {
    private final String rootDir;
    private final List<String> writable = new ArrayList<>();
    private boolean rootless;
    private boolean readOnlyHost;
    private long maxOutputBytes = LocalRunner.DEFAULT_MAX_OUTPUT_BYTES;
    private Supplier<Map<String, String>> hostEnvironment = HostEnvironment::ofThisProcess;

    private Builder(String rootDir) {
      this.rootDir = rootDir;
    }

    /** Paths beyond the root where the children may write (they must exist). */
    public Builder writablePaths(String... paths) {
      writable.addAll(List.of(paths));
      return this;
    }

    /**
     * Forces the rootless mechanisms (Landlock and seccomp) even when running as root: no network
     * or mount namespace. Default false: as root, {@link NetMode#DENY_ALL} uses a private network
     * namespace.
     */
    public Builder rootless(boolean rootless) {
      this.rootless = rootless;
      return this;
    }

    /**
     * Makes every mount read-only for the children except the writable paths (the root, {@link
     * #writablePaths}, the devices and the private TMPDIR), in a private mount namespace. Needs
     * root: without it every exec is NOT_AVAILABLE with the reason. Default false.
     */
    public Builder readOnlyHost(boolean readOnlyHost) {
      this.readOnlyHost = readOnlyHost;
      return this;
    }

    /** The capture cap per stream when a call does not set one; zero or negative: no cap. */
    public Builder maxOutputBytes(long maxOutputBytes) {
      this.maxOutputBytes = maxOutputBytes > 0 ? maxOutputBytes : Long.MAX_VALUE;
      return this;
    }

    /** Where the host environment comes from (default: this JVM's); for tests. */
    Builder hostEnvironment(Supplier<Map<String, String>> hostEnvironment) {
      this.hostEnvironment = hostEnvironment;
      return this;
    }

    /**
     * The runner. Also starts the engine's threads from this (unconfined) thread, before any
     * confinement thread can exist.
     *
     * @throws SandboxException VALIDATION when the root is null or empty, a writable path does not
     *     exist, or both rootless and readOnlyHost are set (a read-only host needs a mount
     *     namespace); INTERNAL when the scratch directory cannot be created
     */
    public ConfinedRunner build() {
      if (rootDir == null || rootDir.isEmpty()) {
        throw new SandboxException(Kind.VALIDATION, "sandbox: confined runner root must be set");
      }
      if (rootless && readOnlyHost) {
        throw new SandboxException(
            Kind.VALIDATION,
            "sandbox: a read-only host needs a private mount namespace, which rootless mode does"
                + " not use");
      }
      List<String> resolved = new ArrayList<>();
      for (String w : writable) {
        if (w == null || w.isEmpty()) {
          throw new SandboxException(Kind.VALIDATION, "sandbox: empty writable path");
        }
        try {
          resolved.add(Path.of(w).toAbsolutePath().toRealPath().toString());
        } catch (IOException e) {
          throw new SandboxException(
              Kind.VALIDATION, "sandbox: writable path " + w + " does not exist", e);
        }
      }
      Path scratch;
      try {
        scratch = Files.createTempDirectory("confine-scratch-").toRealPath();
        scratch.toFile().deleteOnExit();
      } catch (IOException e) {
        throw new SandboxException(
            Kind.INTERNAL, "sandbox: cannot create the scratch directory: " + e, e);
      }
      if (NativeAccess.isAvailable()) {
        ConfinementThreads.startEngineThreads();
      }
      return new ConfinedRunner(
          RootedPaths.resolveRoot(rootDir),
          List.copyOf(resolved),
          rootless,
          readOnlyHost,
          scratch,
          maxOutputBytes,
          hostEnvironment);
    }
  }
}
