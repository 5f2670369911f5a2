package dev.confine.confined;

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
import dev.confine.linux.Landlock;
import dev.confine.linux.NativeAccess;
import dev.confine.linux.SeccompNetDeny;
import dev.confine.linux.TreeGuard;
import dev.confine.local.ExecOutcomes;
import dev.confine.local.LocalRunner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Runs commands as host processes, like {@link LocalRunner}, confined by the kernel without root
 * and without a helper binary:
 *
 * <ul>
 *   <li>Filesystem write bounds (Landlock, at the highest ABI the kernel offers): writes, file
 *       creation, removal, links and renames (refer), truncation and device ioctls are allowed only
 *       beneath the root, the {@linkplain Builder#writablePaths writable paths}, {@code /dev/null},
 *       {@code /dev/tty}, {@code /dev/pts} and a private scratch directory passed as {@code TMPDIR}
 *       (one per exec, removed afterwards). Reads and execution stay open. On Landlock ABI 6 and
 *       newer the children also cannot signal processes outside their domain (the JVM) or connect
 *       to its abstract unix sockets.
 *   <li>{@link NetMode#DENY_ALL}: a seccomp filter refuses {@code socket} for AF_INET, AF_INET6 and
 *       AF_PACKET (EACCES) and {@code io_uring_setup} (EPERM); AF_UNIX keeps working. Network
 *       namespaces are not used in this version, not even as root.
 * </ul>
 *
 * <p>Both mechanisms need no_new_privs: <b>setuid and file-capability programs (sudo, su, ping on
 * some systems) lose their privileges inside</b>. ALLOW_LIST and PROXY need the network proxy and
 * are NOT_AVAILABLE; memory, CPU and process caps are NOT_AVAILABLE in this version (see {@link
 * #exec}). A host without Landlock runs nothing (NOT_AVAILABLE, with the reason).
 *
 * <p>The confinement is applied to dedicated confinement threads (one per distinct confinement, at
 * most {@value ConfinementThreads#MAX_LIVE}), which only spawn: the rest of the JVM is unaffected.
 * Thread-safe.
 */
public final class ConfinedRunner implements Runner, EnforcementReporter {
  private static final List<String> DEVICES = List.of("/dev/null", "/dev/tty", "/dev/pts");

  private final Path root;
  private final List<String> writablePaths;
  private final Path scratch;
  private final long defaultMaxOutputBytes;
  private final Supplier<Map<String, String>> hostEnvironment;
  private volatile List<String> hostEntries;
  private final Enforcement enforcement;
  private final AtomicLong execs = new AtomicLong();

  private ConfinedRunner(
      Path root,
      List<String> writablePaths,
      Path scratch,
      long defaultMaxOutputBytes,
      Supplier<Map<String, String>> hostEnvironment) {
    this.root = root;
    this.writablePaths = writablePaths;
    this.scratch = scratch;
    this.defaultMaxOutputBytes = defaultMaxOutputBytes;
    this.hostEnvironment = hostEnvironment;
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

  /**
   * Environment allow-list; filesystem bounds where Landlock works; {@link NetMode#DENY_ALL} where
   * Landlock and seccomp filters both work. No resource caps.
   */
  @Override
  public Enforcement enforcement() {
    return enforcement;
  }

  /**
   * Runs {@code command} as {@link LocalRunner#exec} does, under the confinement.
   *
   * @throws SandboxException NOT_AVAILABLE when Landlock is unavailable, for ALLOW_LIST and PROXY
   *     (they need the network proxy, not built yet), for DENY_ALL without seccomp, and for memory,
   *     CPU and process caps: v1 cgroup placement has the spawning thread write cgroup files, which
   *     its Landlock domain forbids, and the caps are not wired to confinement threads yet
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

    NativeAccess.unavailabilityCause()
        .ifPresent(
            why -> {
              throw unavailable(why);
            });
    Optional<String> noLandlock = Landlock.unavailabilityCause();
    if (noLandlock.isPresent()) {
      throw unavailable("filesystem bounds need Landlock: " + noLandlock.get());
    }
    NetMode mode = opts.net().mode();
    boolean denyNetwork =
        switch (mode) {
          case DEFAULT -> false;
          case DENY_ALL -> {
            SeccompNetDeny.unavailabilityCause()
                .ifPresent(
                    why -> {
                      throw unavailable("net policy DENY_ALL needs seccomp: " + why);
                    });
            yield true;
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

    Path workDir = ExecOutcomes.workDir(root, cmd, opts);
    Path tmp = scratch.resolve("exec-" + execs.incrementAndGet());
    try {
      Files.createDirectories(tmp);
    } catch (IOException e) {
      throw new SandboxException(
          Kind.INTERNAL, "sandbox: exec " + cmd + ": scratch directory " + tmp + ": " + e, e);
    }
    try {
      List<String> env = new ArrayList<>(opts.env().apply(hostEntries()));
      env.removeIf(e -> e.startsWith("TMPDIR="));
      env.add("TMPDIR=" + tmp);
      long cap =
          opts.resources().maxOutputBytes() > 0
              ? opts.resources().maxOutputBytes()
              : defaultMaxOutputBytes;
      Confinement confinement = confinement(denyNetwork);
      TreeGuard guard = spec -> ConfinementThreads.spawn(confinement, spec);
      try {
        return ExecOutcomes.run(request, workDir, env, cap, guard, deadline);
      } catch (ConfinementException e) {
        throw new SandboxException(
            Kind.NOT_AVAILABLE,
            "sandbox: exec " + cmd + ": the confinement could not be applied: " + e.getMessage(),
            e);
      }
    } finally {
      deleteTree(tmp);
    }
  }

  private Confinement confinement(boolean denyNetwork) {
    List<String> writable = new ArrayList<>();
    writable.add(root.toString());
    writable.addAll(writablePaths);
    writable.add(scratch.toString());
    writable.addAll(DEVICES);
    return new Confinement(writable, denyNetwork);
  }

  private static SandboxException unavailable(String why) {
    return new SandboxException(Kind.NOT_AVAILABLE, "sandbox: " + why);
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException e) {
      // best effort: the scratch parent is removed at exit when empty
    }
  }

  private List<String> hostEntries() {
    List<String> entries = hostEntries;
    if (entries == null) {
      Map<String, String> env = hostEnvironment.get();
      List<String> built = new ArrayList<>(env.size());
      env.forEach((k, v) -> built.add(k + "=" + v));
      hostEntries = entries = List.copyOf(built);
    }
    return entries;
  }

  @Override
  public String toString() {
    return "ConfinedRunner[root=" + root + ", writable=" + writablePaths + "]";
  }

  /** Builds a {@link ConfinedRunner}. */
  public static final class Builder {
    private final String rootDir;
    private final List<String> writable = new ArrayList<>();
    private long maxOutputBytes = LocalRunner.DEFAULT_MAX_OUTPUT_BYTES;
    private Supplier<Map<String, String>> hostEnvironment = System::getenv;

    private Builder(String rootDir) {
      this.rootDir = rootDir;
    }

    /** Paths beyond the root where the children may write (they must exist). */
    public Builder writablePaths(String... paths) {
      writable.addAll(List.of(paths));
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
     * @throws SandboxException VALIDATION when the root is null or empty or a writable path does
     *     not exist; INTERNAL when the scratch directory cannot be created
     */
    public ConfinedRunner build() {
      if (rootDir == null || rootDir.isEmpty()) {
        throw new SandboxException(Kind.VALIDATION, "sandbox: confined runner root must be set");
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
          scratch,
          maxOutputBytes,
          hostEnvironment);
    }
  }
}
