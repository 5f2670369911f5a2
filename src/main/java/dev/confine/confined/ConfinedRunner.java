package dev.confine.confined;

import dev.confine.Capability;
import dev.confine.CapsMechanism;
import dev.confine.Enforcement;
import dev.confine.EnforcementReporter;
import dev.confine.ExecOptions;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
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
import dev.confine.linux.confinement.ConfinementException;
import dev.confine.linux.confinement.ConfinementThreads;
import dev.confine.linux.confinement.ConfinementThreads.Confinement;
import dev.confine.linux.confinement.ConfinementThreads.Network;
import dev.confine.linux.confinement.ConnectGate;
import dev.confine.linux.confinement.ConnectSupervisor;
import dev.confine.linux.confinement.Credentials;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.NetworkNamespace;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.linux.confinement.ThreadNamespaces;
import dev.confine.linux.sys.Availability;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.net.EgressProxy;
import dev.confine.net.HostResolver;
import dev.confine.net.ProxyAuditListener;
import dev.confine.session.ProcessInfo;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Runs commands as host processes, like {@link dev.confine.local.LocalRunner}, confined by the
 * kernel without a helper binary, rootless, with more as root:
 *
 * <ul>
 *   <li>Filesystem bounds (Landlock, at the highest ABI the kernel offers): writes, file creation,
 *       removal, links and renames (refer), truncation and device ioctls are allowed only beneath
 *       the root, the {@linkplain Builder#writablePaths writable paths} (resolved once, when the
 *       runner is built), the harmless devices ({@code /dev/null}, {@code /dev/zero}, {@code
 *       /dev/full}, {@code /dev/random}, {@code /dev/urandom}), {@code /dev/tty}, a session's own
 *       pty and a private scratch directory passed as {@code TMPDIR} (one per exec in flight,
 *       emptied afterwards and then reused). Reads are allowed everywhere except in the device
 *       directories ({@code /dev}, every devtmpfs and devpts mount), where only those devices,
 *       {@code /dev/ptmx}, {@code /dev/shm} and {@code /dev/mqueue} remain: no other terminal,
 *       console, disk or input device can be opened. Execution stays open. On Landlock ABI 6 and
 *       newer the children also cannot signal processes outside their domain (the JVM) or connect
 *       to its abstract unix sockets.
 *   <li>No capabilities: every child starts with empty capability sets, bounding set included as
 *       root, and cannot gain any at exec ({@link Credentials}); optionally as another user
 *       ({@linkplain Builder#runAs run as}, root only).
 *   <li>A seccomp filter in every mode refuses the calls that act on another process by pid
 *       (prlimit64, setpriority, sched_setaffinity and the like) unless they name the caller, and
 *       the terminal-injection ioctls TIOCSTI and TIOCLINUX ({@link SeccompFilter}).
 *   <li>{@link NetMode#DENY_ALL}: the filter refuses {@code socket} for every family but AF_UNIX
 *       (EACCES) and {@code io_uring_setup} (EPERM). As root (unless {@linkplain Builder#rootless
 *       rootless} is forced) the children get a private network namespace instead, with only
 *       loopback, up: they see only {@code lo}, can serve and connect on it, and reach nothing
 *       else; the filter keeps AF_INET, AF_INET6 and NETLINK_ROUTE there and refuses every other
 *       family and io_uring. Either way, where the kernel allows (Linux 5.6), every connect is made
 *       by the {@link ConnectSupervisor}, which lets a unix socket be reached only beneath the
 *       paths the children may write (the host daemons' sockets are refused) and refuses unix
 *       datagram sockets.
 *   <li>{@linkplain Builder#readOnlyHost Read-only host} (root, on request): a private mount
 *       namespace in which every mount is read-only except the writable paths, so that what
 *       Landlock does not cover (chmod, chown, extended attributes, timestamps) is refused outside
 *       them too (EROFS).
 * </ul>
 *
 * <p>Memory, CPU and process caps and tree kill work as for {@link dev.confine.local.LocalRunner}
 * ({@link Builder#caps}): every tree is held beyond its process group, by its own cgroup where one
 * can be made (the confinement thread enters the tree's cgroups for the spawn through files the
 * caller opened, since its Landlock domain forbids opening them) or else by the /proc sampler, and
 * a private TMPDIR is reused only when nothing of its last tree can still be alive.
 *
 * <p>Landlock and seccomp need no_new_privs: <b>setuid and file-capability programs (sudo, su, ping
 * on some systems) lose their privileges inside</b>. ALLOW_LIST and PROXY, as root: a private
 * network namespace per policy whose only way out is the egress proxy's listener in it, the proxy
 * variables set for the children ({@link #close} stops the proxies); without root (or for a policy
 * that lists unix sockets) the connect supervisor makes every connect of the children's instead
 * ({@link ProxiedNetwork}; Linux 6.7 or newer, else NOT_AVAILABLE with the reason). A host without
 * Landlock or seccomp filters runs nothing (NOT_AVAILABLE, with the reason). {@link
 * #capabilities()} says which mechanism holds on this host and why the others do not.
 *
 * <p>It manages sessions ({@link ProcessManager}) under the same confinement as its execs; a
 * session's private TMPDIR lives until the session is closed.
 *
 * <p>The confinement is applied to dedicated confinement threads (one per distinct confinement, at
 * most {@value ConfinementThreads#MAX_LIVE}), which only spawn: the rest of the JVM is unaffected.
 * Thread-safe.
 */
public final class ConfinedRunner
    implements Runner, EnforcementReporter, ProcessManager, AutoCloseable {
  // A session's own pty is added for its spawn alone (ConfinementThreads.spawn); /dev/tty opens
  // the caller's controlling terminal, which is that pty or nothing.
  static final List<String> DEVICES =
      List.of("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty");

  private final Path root;
  private final List<String> writablePaths;
  private final boolean rootless;
  private final boolean readOnlyHost;
  private final Credentials.User user; // null: this JVM's user
  private final ScratchDirectories scratch;
  private final Caps caps;
  private final long defaultMaxOutputBytes;
  private final HostEnvironment hostEnvironment;
  // The caps part, which every exec checks; the whole report is made when first asked for.
  private final Enforcement capsEnforcement;
  private volatile Enforcement enforcement;
  // Built once per network, not per exec, which would sort the paths every time
  // (docs/benchmarks.md).
  private final Map<Network, Confinement> confinements =
      Collections.synchronizedMap(new EnumMap<>(Network.class));
  private final ProcessRegistry sessions = new ProcessRegistry(this::startSession);

  /** How many proxied networks no exec or session uses are kept for reuse. */
  static final int IDLE_NETWORKS = 4;

  // One proxy and namespace per ALLOW_LIST or PROXY policy in use, and a few idle ones; access
  // order: the eldest is the least recently used.
  private final LinkedHashMap<NetPolicy, ProxiedNetwork> proxied =
      new LinkedHashMap<>(16, 0.75f, true);
  private final ProxiedNetwork.Settings proxySettings;
  private boolean closed;

  private ConfinedRunner(
      Path root,
      List<String> writablePaths,
      boolean rootless,
      boolean readOnlyHost,
      Credentials.User user,
      ScratchDirectories scratch,
      Caps caps,
      long defaultMaxOutputBytes,
      Supplier<Map<String, String>> hostEnvironment,
      ProxiedNetwork.Settings proxySettings) {
    this.caps = caps;
    this.proxySettings = proxySettings;
    this.root = root;
    this.writablePaths = writablePaths;
    this.rootless = rootless;
    this.readOnlyHost = readOnlyHost;
    this.user = user;
    this.scratch = scratch;
    this.defaultMaxOutputBytes = defaultMaxOutputBytes;
    this.hostEnvironment = new HostEnvironment(hostEnvironment);
    this.capsEnforcement = enforcement(false);
  }

  /**
   * What this runner enforces: with {@code proxied}, ALLOW_LIST and PROXY where a proxied network
   * can be made (which loads the proxy's transport: asked for only when reported).
   */
  private Enforcement enforcement(boolean proxied) {
    if (!Engine.availability().isAvailable() || !confinement().isAvailable()) {
      return Enforcement.NONE;
    }
    NetMode[] modes =
        proxied && proxiedNetwork(rootless).availability().isAvailable()
            ? new NetMode[] {NetMode.DENY_ALL, NetMode.ALLOW_LIST, NetMode.PROXY}
            : new NetMode[] {NetMode.DENY_ALL};
    return caps.enforcement(
            Enforcement.builder().envAllowList(true).filesystemBounds(true).netModes(modes))
        .build();
  }

  /**
   * How ALLOW_LIST and PROXY children get their network here, and whether they can: supervised or
   * not, in a private network namespace or not.
   */
  record ProxiedWay(Network network, boolean inNamespace, Availability availability) {}

  /**
   * How ALLOW_LIST and PROXY hold here, for a policy that lists no unix sockets. As root (unless
   * rootless is forced) the children get a private network namespace whose only way out is the
   * egress proxy's listener in it (served by Netty's epoll transport, the only one that adopts a
   * socket), and where the kernel allows, the connect supervisor makes every connect of theirs in
   * it too (transparent mode, DNS, unix sockets). Rootless, the supervisor alone.
   */
  static ProxiedWay proxiedNetwork(boolean rootless) {
    return proxiedNetwork(rootless, null);
  }

  /**
   * How {@code policy} (null: one that lists no unix sockets) holds here: a policy that lists unix
   * sockets needs the connect supervisor (it decides every unix connect).
   */
  static ProxiedWay proxiedNetwork(boolean rootless, NetPolicy policy) {
    Availability supervised =
        ConnectSupervisor.availability().prefixed("needs the connect supervisor: ");
    if (rootless) {
      return new ProxiedWay(Network.SUPERVISED, false, supervised);
    }
    Availability namespace =
        ThreadNamespaces.networkAvailability()
            .prefixed("needs a private network namespace: ")
            .and(
                Availability.ofNullable(
                    EgressProxy.adoptedListenerUnavailability()
                        .map(why -> "the egress proxy " + why)
                        .orElse(null)));
    if (supervised.isAvailable()) {
      return new ProxiedWay(Network.SUPERVISED, namespace.isAvailable(), Availability.AVAILABLE);
    }
    boolean sockets = policy != null && !policy.unixSockets().isEmpty();
    return new ProxiedWay(
        Network.NAMESPACE,
        true,
        sockets ? supervised : namespace.isAvailable() ? namespace : namespace.and(supervised));
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

  /** Whether anything can run confined on this host, and if not why (no Landlock, no seccomp). */
  static Availability confinement() {
    return Landlock.availability()
        .prefixed("needs Landlock: ")
        .and(SeccompFilter.availability().prefixed("needs seccomp filters: "));
  }

  /**
   * How {@link NetMode#DENY_ALL} is enforced here: a private network namespace as root (unless
   * rootless is forced), else the seccomp filter.
   */
  Network denyAllNetwork() {
    return !rootless && ThreadNamespaces.networkAvailability().isAvailable()
        ? Network.NAMESPACE
        : Network.SECCOMP;
  }

  /**
   * Environment allow-list, filesystem bounds and {@link NetMode#DENY_ALL} where Landlock and
   * seccomp filters both work (nothing otherwise: nothing runs without them). Caps as the host
   * allows. Which mechanisms hold, and why the others do not: {@link #capabilities()}.
   */
  @Override
  public Enforcement enforcement() {
    Enforcement e = enforcement;
    if (e == null) {
      e = enforcement(true);
      enforcement = e;
    }
    return e;
  }

  /**
   * Every dimension, whether it holds for this runner on this host, and by which mechanism or why
   * not: filesystem bounds (the Landlock ABI, the resolved writable paths), terminals,
   * capabilities, the user the children run as, other processes, signal scoping, the network modes
   * (a namespace or seccomp, the socket families, and why not a namespace), the read-only host,
   * no_new_privs and its consequence, caps.
   */
  @Override
  public List<Capability> capabilities() {
    return new ConfinedCapabilities(this, user, caps).rows();
  }

  /**
   * Runs {@code command} as {@link dev.confine.local.LocalRunner#exec} does, under the confinement.
   *
   * @throws SandboxException NOT_AVAILABLE when Landlock or seccomp filters are unavailable, when
   *     the children are to run as another user and this JVM is not root, when the host is to be
   *     read-only and this JVM cannot make a private mount namespace (not root), for ALLOW_LIST and
   *     PROXY without a network namespace (not root, or rootless) or with unix sockets listed,
   *     after {@link #close}, and for caps this host cannot enforce (see {@link #capabilities()})
   */
  @Override
  public ExecResult exec(String command, List<String> args, ExecOptions options) {
    ExecRequest request = ExecRequest.of(command, args, options);
    ExecOptions opts = request.options();
    long deadline = opts.hasTimeout() ? Deadlines.fromNow(opts.timeout()) : Long.MAX_VALUE;
    Prepared p = prepare(request);
    try {
      return HostExec.run(
          request,
          p.workDir(),
          p.env(),
          HostExec.outputCap(opts, defaultMaxOutputBytes),
          p.guard(),
          deadline);
    } catch (ConfinementException e) {
      throw notApplied(request.command(), e);
    } finally {
      // Reused only if nothing the exec started can still write into it.
      finish(p, p.guard().holdsEveryProcess());
    }
  }

  /**
   * What an exec or a session runs with: checked, guarded, with its private TMPDIR and the
   * environment that names it.
   */
  private record Prepared(
      WorkDir workDir, TreeGuard guard, Path tmp, List<String> env, ProxiedNetwork net) {}

  /** Gives back what an exec or session took: its TMPDIR (reused when it can be), its network. */
  private void finish(Prepared p, boolean reusable) {
    try {
      scratch.giveBack(p.tmp(), reusable);
    } finally {
      release(p.net());
    }
  }

  /**
   * Checks the request's options and working directory, makes the guard (caps inside the
   * confinement) and takes a private TMPDIR; on a failure, what was taken is given back.
   */
  private Prepared prepare(ExecRequest request) {
    String cmd = request.command();
    ExecOptions opts = request.options();
    Network network = checkPolicy(opts);
    ProxiedNetwork net = network == null ? acquire(opts.net()) : null;
    try {
      Confinement confinement = net != null ? net.confinement() : confinement(network);
      WorkDir workDir = WorkDir.check(root, cmd, opts.workDir());
      TreeGuard guard = ConfinementThreads.guard(confinement, caps.guardFor(cmd, opts));
      Path tmp = null;
      try {
        tmp = scratch.take(cmd);
        return new Prepared(workDir, guard, tmp, environment(opts, tmp, net), net);
      } catch (RuntimeException e) {
        if (tmp != null) {
          scratch.giveBack(tmp, false);
        }
        guard.close();
        throw e;
      }
    } catch (RuntimeException e) {
      release(net);
      throw e;
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
    ExecRequest request = HostSession.request(spec);
    Prepared p = prepare(request);
    try {
      return HostSession.start(
          spec,
          p.workDir(),
          p.env(),
          p.guard(),
          HostExec.outputCap(request.options(), defaultMaxOutputBytes),
          () -> finish(p, p.guard().holdsEveryProcess()));
    } catch (ConfinementException e) {
      finish(p, false);
      throw notApplied(request.command(), e);
    } catch (RuntimeException e) {
      finish(p, false);
      throw e;
    }
  }

  /**
   * Refuses what this host cannot enforce; the network the children get (null: a proxied network,
   * {@link #acquire}).
   */
  private Network checkPolicy(ExecOptions opts) {
    Engine.availability().ensureAvailable();
    confinement().prefixed("the confinement ").ensureAvailable();
    if (user != null && Credentials.processUid() != 0) {
      throw unavailable(
          "running children as uid "
              + user.uid()
              + " needs root (this JVM runs as uid "
              + Credentials.processUid()
              + ")");
    }
    if (readOnlyHost) {
      ThreadNamespaces.mountAvailability()
          .prefixed("a read-only host needs a private mount namespace: ")
          .ensureAvailable();
    }
    NetMode mode = opts.net().mode();
    Network network =
        switch (mode) {
          case DEFAULT -> Network.HOST;
          case DENY_ALL -> denyAllNetwork();
          case ALLOW_LIST, PROXY -> {
            proxiedNetwork(rootless, opts.net())
                .availability()
                .prefixed(
                    "net policy "
                        + mode
                        + (opts.net().unixSockets().isEmpty() ? " " : " with unix sockets "))
                .ensureAvailable();
            for (String socket : opts.net().unixSockets()) {
              if (!Files.exists(Path.of(socket))) {
                throw SandboxException.of(
                    Kind.NOT_FOUND, "allowed unix socket \"" + socket + "\" does not exist");
              }
            }
            yield null;
          }
        };
    ExecPolicy.validate(opts, capsEnforcement);
    return network;
  }

  private List<String> environment(ExecOptions opts, Path tmp, ProxiedNetwork net) {
    List<String> env = new ArrayList<>(opts.env().apply(hostEnvironment.entries()));
    env.removeIf(e -> e.startsWith("TMPDIR="));
    env.add("TMPDIR=" + tmp);
    if (net != null) {
      // The proxy's variables replace inherited ones (JAVA_TOOL_OPTIONS and RES_OPTIONS are added
      // to: they hold other flags too); what the caller injects wins.
      Map<String, String> injected = opts.env().inject();
      net.environment()
          .forEach(
              (name, value) -> {
                if (injected == null || !injected.containsKey(name)) {
                  String prefix = name + "=";
                  String inherited =
                      env.stream().filter(e -> e.startsWith(prefix)).findFirst().orElse(null);
                  env.removeIf(e -> e.startsWith(prefix));
                  env.add(
                      ProxiedNetwork.APPENDED.contains(name)
                              && inherited != null
                              && inherited.length() > prefix.length()
                          ? inherited + " " + value
                          : prefix + value);
                }
              });
    }
    return env;
  }

  /**
   * The proxy and namespace enforcing {@code policy}, made on first use, taken for one exec or
   * session until {@link #release}. Those no exec or session uses are kept for the next (at most
   * {@value #IDLE_NETWORKS}, the least recently used closed first) until {@link #close}.
   *
   * @throws SandboxException VALIDATION for a policy the proxy cannot take, NOT_AVAILABLE when the
   *     namespace or the proxy cannot be made, or the runner is closed
   */
  private ProxiedNetwork acquire(NetPolicy policy) {
    synchronized (proxied) {
      if (closed) {
        throw unavailable("this runner is closed");
      }
      ProxiedNetwork net = proxied.get(policy);
      if (net == null) {
        net =
            ProxiedNetwork.start(
                proxiedNetwork(rootless, policy),
                policy,
                proxySettings,
                childWritable(),
                this::makeConfinement);
        proxied.put(policy, net);
      }
      net.users++;
      return net;
    }
  }

  /** An exec or session no longer uses {@code net} (null: none); closes the surplus idle ones. */
  private void release(ProxiedNetwork net) {
    if (net == null) {
      return;
    }
    List<ProxiedNetwork> surplus = new ArrayList<>();
    synchronized (proxied) {
      net.users--;
      int idle = 0;
      // Newest first: the eldest idle ones beyond the bound go.
      List<Map.Entry<NetPolicy, ProxiedNetwork>> entries = new ArrayList<>(proxied.entrySet());
      for (int i = entries.size() - 1; i >= 0; i--) {
        ProxiedNetwork n = entries.get(i).getValue();
        if (n.users == 0 && ++idle > IDLE_NETWORKS) {
          proxied.remove(entries.get(i).getKey());
          surplus.add(n);
        }
      }
    }
    surplus.forEach(ProxiedNetwork::close);
  }

  /** How many proxied networks are open (for tests). */
  int proxiedNetworks() {
    synchronized (proxied) {
      return proxied.size();
    }
  }

  /**
   * Stops the egress proxies of ALLOW_LIST and PROXY execs and sessions and releases their
   * namespaces: children still running in one lose their way out. Other execs and sessions are not
   * affected; later execs of those modes are NOT_AVAILABLE. Idempotent.
   */
  @Override
  public void close() {
    List<ProxiedNetwork> nets;
    synchronized (proxied) {
      closed = true;
      nets = new ArrayList<>(proxied.values());
      proxied.clear();
    }
    nets.forEach(ProxiedNetwork::close);
  }

  private static SandboxException notApplied(String cmd, ConfinementException e) {
    return SandboxException.of(
        Kind.NOT_AVAILABLE,
        "exec " + cmd + ": the confinement could not be applied: " + e.getMessage(),
        e);
  }

  /**
   * The confinement of {@code network} (HOST, or DENY_ALL's): DENY_ALL's supervised where the
   * kernel allows ({@link DenyAllGate}), starting the supervisor first.
   */
  private Confinement confinement(Network network) {
    return confinements.computeIfAbsent(
        network,
        n -> {
          if (n == Network.HOST || !ConnectSupervisor.unixAvailability().isAvailable()) {
            return makeConfinement(n, null, null);
          }
          ProxiedNetwork.startSupervisor(NetMode.DENY_ALL);
          return makeConfinement(n, null, new DenyAllGate(childWritable(), n == Network.NAMESPACE));
        });
  }

  private Confinement makeConfinement(
      Network network, NetworkNamespace namespace, ConnectGate gate) {
    return new Confinement(childWritable(), network, readOnlyHost, user, null, namespace, gate);
  }

  /** Where the children may write: the root, the writable paths, their TMPDIRs, the devices. */
  private List<String> childWritable() {
    List<String> writable = new ArrayList<>();
    writable.add(root.toString());
    writable.addAll(writablePaths);
    writable.add(scratch.parent().toString());
    writable.addAll(DEVICES);
    return writable;
  }

  private static SandboxException unavailable(String why) {
    return SandboxException.of(Kind.NOT_AVAILABLE, "" + why);
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
    private Credentials.User user;
    private CapsMechanism caps = CapsMechanism.AUTO;
    private String cgroupParent;
    private long maxOutputBytes = HostExec.DEFAULT_MAX_OUTPUT_BYTES;
    private Supplier<Map<String, String>> hostEnvironment = HostEnvironment::ofThisProcess;
    private ProxyAuditListener proxyAudit = new ProxyAuditListener() {};
    private List<X509Certificate> proxyOutboundRoots = List.of();
    private HostResolver proxyResolver = HostResolver.system();

    private Builder(String rootDir) {
      this.rootDir = rootDir;
    }

    /**
     * Paths beyond the root where the children may write. Each must exist, and is resolved once,
     * when the runner is built (symbolic links followed); {@link ConfinedRunner#writablePaths()}
     * and {@code confine doctor --confined} show the result. A path named inside the root or inside
     * another writable path must resolve inside it too (else VALIDATION): a link planted there by a
     * confined child must not make its target writable.
     */
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

    /**
     * The capture cap per stream when a call does not set one; zero or negative means no cap of its
     * own: the most this JVM can capture (see {@link ResourceLimits#maxOutputBytes()}).
     */
    public Builder maxOutputBytes(long maxOutputBytes) {
      this.maxOutputBytes = maxOutputBytes > 0 ? maxOutputBytes : Long.MAX_VALUE;
      return this;
    }

    /**
     * Runs the children as user {@code uid} and group {@code gid} (the only supplementary group),
     * while the JVM keeps its own: the confinement threads switch themselves with the per-thread
     * system calls. Needs root: without it every exec is NOT_AVAILABLE with the reason. The private
     * TMPDIR belongs to that user; the root and the writable paths must be writable by it where the
     * children are to write (their own permissions apply).
     *
     * @throws SandboxException VALIDATION for a negative id
     */
    public Builder runAs(int uid, int gid) {
      if (uid < 0 || gid < 0) {
        throw SandboxException.of(
            Kind.VALIDATION,
            "runAs needs a user and group id of 0 or more, not " + uid + ":" + gid);
      }
      this.user = new Credentials.User(uid, gid);
      return this;
    }

    /**
     * How memory, CPU and process caps are enforced, and how every tree is held, as for {@link
     * LocalRunner.Builder#caps} (default {@link CapsMechanism#AUTO}): the confinement threads are
     * placed in a tree's cgroups for its spawn, through files opened beforehand by the caller.
     */
    public Builder caps(CapsMechanism caps) {
      this.caps = Objects.requireNonNull(caps, "caps");
      return this;
    }

    /**
     * A delegated cgroup v2 directory for the trees' cgroups, as {@link
     * LocalRunner.Builder#cgroupParent}.
     */
    public Builder cgroupParent(String cgroupParent) {
      this.cgroupParent = cgroupParent;
      return this;
    }

    /**
     * Receives every decision and closed connection of the egress proxies that ALLOW_LIST and PROXY
     * execs and sessions go through (default: none). Called on the proxies' network threads: keep
     * it fast.
     */
    public Builder proxyAudit(ProxyAuditListener audit) {
      this.proxyAudit = Objects.requireNonNull(audit, "audit");
      return this;
    }

    /**
     * How the egress proxies resolve names (default: {@link HostResolver#system()}): the names of
     * the children's requests, and the DNS questions of rootless children, which the proxy answers
     * with what this resolver gives and the rules allow.
     */
    public Builder proxyResolver(HostResolver resolver) {
      this.proxyResolver = Objects.requireNonNull(resolver, "resolver");
      return this;
    }

    /**
     * The certificate authorities the egress proxies trust on their own TLS connections: to an
     * {@code https://} upstream and, with MITM, to the destinations (default: the JDK's trust
     * store).
     */
    public Builder proxyOutboundRoots(Collection<X509Certificate> roots) {
      this.proxyOutboundRoots = List.copyOf(Objects.requireNonNull(roots, "roots"));
      return this;
    }

    /** Where the host environment comes from (default: this JVM's); for tests. */
    Builder hostEnvironment(Supplier<Map<String, String>> hostEnvironment) {
      this.hostEnvironment = hostEnvironment;
      return this;
    }

    /**
     * The writable paths, each resolved once (symbolic links followed). A path named inside the
     * root or inside another writable path, trees a confined child may write to, must resolve
     * inside that tree as well: a link a child planted there must not widen the bounds.
     */
    private List<String> resolveWritable(Path resolvedRoot) {
      Path lexicalRoot = Path.of(rootDir).toAbsolutePath().normalize();
      Map<Path, Path> named = new LinkedHashMap<>(); // lexical -> resolved
      for (String w : writable) {
        if (w == null || w.isEmpty()) {
          throw SandboxException.of(Kind.VALIDATION, "empty writable path");
        }
        Path lexical;
        Path real;
        try {
          lexical = Path.of(w).toAbsolutePath().normalize();
          real = lexical.toRealPath();
        } catch (InvalidPathException e) {
          throw SandboxException.of(
              Kind.VALIDATION,
              "a writable path cannot be named as a Java path here: " + e.getMessage(),
              e);
        } catch (IOException e) {
          throw SandboxException.of(Kind.VALIDATION, "writable path " + w + " does not exist", e);
        }
        named.put(lexical, real);
      }
      Map<Path, Path> trees = new LinkedHashMap<>(named);
      trees.put(lexicalRoot, resolvedRoot);
      for (Map.Entry<Path, Path> w : named.entrySet()) {
        for (Map.Entry<Path, Path> tree : trees.entrySet()) {
          if (tree.getKey().equals(w.getKey())) {
            continue;
          }
          boolean namedInside =
              w.getKey().startsWith(tree.getKey()) || w.getKey().startsWith(tree.getValue());
          if (namedInside && !w.getValue().startsWith(tree.getValue())) {
            throw SandboxException.of(
                Kind.VALIDATION,
                "writable path "
                    + w.getKey()
                    + " resolves to "
                    + w.getValue()
                    + ", outside "
                    + tree.getValue()
                    + " where it is named: a symbolic link in a tree confined children can"
                    + " write may have been planted by one; name "
                    + w.getValue()
                    + " itself if that is what you mean");
          }
        }
      }
      List<String> out = new ArrayList<>();
      for (Path real : named.values()) {
        if (!out.contains(real.toString())) {
          out.add(real.toString());
        }
      }
      return out;
    }

    private static List<Path> union(Path root, List<String> writable) {
      List<Path> all = new ArrayList<>();
      all.add(root);
      writable.forEach(w -> all.add(Path.of(w)));
      return all;
    }

    /**
     * The runner. Also starts the engine's threads from this (unconfined) thread, before any
     * confinement thread can exist.
     *
     * @throws SandboxException VALIDATION when the root is null or empty, a writable path does not
     *     exist or resolves outside the tree it is named in (see {@link #writablePaths}), the root
     *     or a writable path lies in a device directory (other than /dev/null, /dev/shm and the
     *     like), or both rootless and readOnlyHost are set (a read-only host needs a mount
     *     namespace); INTERNAL when the scratch directory cannot be created
     */
    public ConfinedRunner build() {
      if (rootDir == null || rootDir.isEmpty()) {
        throw SandboxException.of(Kind.VALIDATION, "confined runner root must be set");
      }
      if (rootless && readOnlyHost) {
        throw SandboxException.of(
            Kind.VALIDATION,
            "a read-only host needs a private mount namespace, which rootless mode does"
                + " not use");
      }
      Path resolvedRoot = RootedPaths.resolveRoot(rootDir);
      List<String> resolved = resolveWritable(resolvedRoot);
      if (Engine.availability().isAvailable()) {
        for (Path p : union(resolvedRoot, resolved)) {
          Landlock.deviceDirectoryRefusal(p.toString())
              .ifPresent(
                  why -> {
                    throw SandboxException.of(Kind.VALIDATION, "" + why);
                  });
        }
      }
      ScratchDirectories scratch = ScratchDirectories.create(user);
      if (Engine.availability().isAvailable()) {
        ConfinementThreads.startEngineThreads();
      }
      return new ConfinedRunner(
          resolvedRoot,
          List.copyOf(resolved),
          rootless,
          readOnlyHost,
          user,
          scratch,
          Engine.availability().isAvailable()
              ? Caps.of(caps, cgroupParent)
              : Caps.unavailable("the engine cannot run here"),
          maxOutputBytes,
          hostEnvironment,
          new ProxiedNetwork.Settings(proxyAudit, proxyOutboundRoots, proxyResolver));
    }
  }
}
