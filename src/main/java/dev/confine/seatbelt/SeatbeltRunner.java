package dev.confine.seatbelt;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.Enforcement;
import dev.confine.EnforcementReporter;
import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.host.HostEnvironment;
import dev.confine.host.ProgramLookup;
import dev.confine.session.ProcessInfo;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The seatbelt backend (macOS {@code sandbox-exec}), as far as it can honestly go: it is built from
 * the seed's construction rules, and it knows the seed's profile, argument vector and environment,
 * but <strong>it runs nothing</strong>, on any host. Every {@link #exec}, {@link #start}, {@link
 * #list} and {@link #terminate} fails with NOT_AVAILABLE and the reason, and the report says
 * nothing is enforced ({@link Enforcement#NONE}; every {@link #capabilities()} row false, with the
 * reason).
 *
 * <ul>
 *   <li>Off macOS, {@link Builder#build()} itself is NOT_AVAILABLE: "the seatbelt backend requires
 *       macOS (sandbox-exec); this host is Linux" (the seed's non-darwin stub).
 *   <li>On macOS the runner is built (the binary found, the root and writable paths checked), and
 *       still runs nothing: Confine starts, watches and reaps children through its Linux engine
 *       (pidfds, epoll, cgroups or /proc), which has no macOS port. Running {@code sandbox-exec}
 *       without it would leave the timeout, the tree kill and the caps unenforced, so this runner
 *       refuses rather than run weaker than its report. None of it has been run on macOS.
 * </ul>
 *
 * <p>Thread-safe (immutable).
 */
public final class SeatbeltRunner implements Runner, EnforcementReporter, ProcessManager {
  /** The program the seed runs, looked up on the host's PATH unless {@link Builder#binary}. */
  static final String SANDBOX_EXEC = "sandbox-exec";

  /** Why a runner built on macOS runs nothing. */
  static final String NO_ENGINE =
      "the seatbelt backend runs nothing yet: Confine starts and reaps children through its Linux"
          + " engine (pidfds, epoll), which has no macOS port, and sandbox-exec alone would leave"
          + " timeouts, tree kills and caps unenforced";

  private final Path root;
  private final List<String> writable;
  private final String binary;
  private final HostEnvironment hostEnvironment;
  private final String unavailability;

  SeatbeltRunner(
      Path root,
      List<String> writable,
      String binary,
      Supplier<Map<String, String>> hostEnvironment,
      String unavailability) {
    this.root = root;
    this.writable = List.copyOf(writable);
    this.binary = binary;
    this.hostEnvironment = new HostEnvironment(hostEnvironment);
    this.unavailability = Objects.requireNonNull(unavailability, "unavailability");
  }

  /** A builder for a runner rooted at {@code rootDir}. */
  public static Builder builder(String rootDir) {
    return new Builder(rootDir);
  }

  /**
   * Why this host cannot have a seatbelt runner at all, for a host whose {@code os.name} is {@code
   * osName}: empty on macOS.
   */
  static Optional<String> hostUnavailability(String osName) {
    String os = osName == null ? "" : osName.strip();
    String lower = os.toLowerCase(Locale.ROOT);
    if (lower.startsWith("mac") || lower.startsWith("darwin")) {
      return Optional.empty();
    }
    return Optional.of(
        "the seatbelt backend requires macOS (sandbox-exec); this host is "
            + (os.isEmpty() ? "of an unnamed system" : os));
  }

  /** The root: absolute and symlink-resolved. */
  public Path root() {
    return root;
  }

  /** The writable paths beyond the root: resolved, without duplicates or the root itself. */
  public List<String> writablePaths() {
    return writable.subList(1, writable.size());
  }

  /** The {@code sandbox-exec} this runner would run. */
  String binary() {
    return binary;
  }

  /**
   * Where the profile lets children write: the root, then the writable paths ({@link
   * #writablePaths()}), one {@code subpath} rule each.
   */
  List<String> profileWritable() {
    return writable;
  }

  /** Why every call fails with NOT_AVAILABLE. */
  String unavailability() {
    return unavailability;
  }

  /**
   * The argument vector the seed would run for {@code command} under network {@code mode}: {@code
   * sandbox-exec -p <profile> command args...}, the profile allowing writes beneath {@link
   * #profileWritable()}; {@code proxyPort} is the enforcement proxy's for ALLOW_LIST and PROXY.
   */
  List<String> commandLine(String command, List<String> args, NetMode mode, int proxyPort) {
    return SeatbeltLaunch.argv(
        binary, SeatbeltProfile.of(writable, mode, proxyPort), command, args);
  }

  /** The child's environment the seed would build ({@link SeatbeltLaunch#environment}). */
  List<String> environment(EnvPolicy policy, int proxyPort, String caBundle) {
    return SeatbeltLaunch.environment(policy, hostEnvironment.entries(), proxyPort, caBundle);
  }

  /** Nothing: this runner runs nothing ({@link Enforcement#NONE}). */
  @Override
  public Enforcement enforcement() {
    return Enforcement.NONE;
  }

  /** Every dimension, none enforced, each with the reason this runner runs nothing. */
  @Override
  public List<Capability> capabilities() {
    List<Capability> rows = new ArrayList<>();
    for (Dimension d : Dimension.values()) {
      rows.add(new Capability(d, false, unavailability));
    }
    return List.copyOf(rows);
  }

  /**
   * Runs nothing.
   *
   * @throws SandboxException NOT_AVAILABLE, always, with the reason
   */
  @Override
  public ExecResult exec(String command, List<String> args, ExecOptions options) {
    throw unavailable();
  }

  /**
   * Starts nothing.
   *
   * @throws SandboxException NOT_AVAILABLE, always, with the reason
   */
  @Override
  public ProcessSession start(ProcessSpec spec) {
    throw unavailable();
  }

  /**
   * Lists nothing.
   *
   * @throws SandboxException NOT_AVAILABLE, always, with the reason
   */
  @Override
  public List<ProcessInfo> list() {
    throw unavailable();
  }

  /**
   * Terminates nothing.
   *
   * @throws SandboxException NOT_AVAILABLE, always, with the reason
   */
  @Override
  public void terminate(String id) {
    throw unavailable();
  }

  private SandboxException unavailable() {
    return SandboxException.of(Kind.NOT_AVAILABLE, unavailability);
  }

  @Override
  public String toString() {
    return "SeatbeltRunner[root=" + root + ", writable=" + writablePaths() + "]";
  }

  /** Builds a {@link SeatbeltRunner}: the seed's {@code New(rootDir, options...)}. */
  public static final class Builder {
    private final String rootDir;
    private final List<String> extraWritable = new ArrayList<>();
    private String binary;
    private String osName = System.getProperty("os.name", "");
    private Supplier<Map<String, String>> hostEnvironment = HostEnvironment::ofThisProcess;

    private Builder(String rootDir) {
      this.rootDir = rootDir;
    }

    /**
     * The {@code sandbox-exec} to run: a path (an executable file), or a name looked up on the
     * host's PATH. Default: {@code sandbox-exec} on the PATH.
     */
    public Builder binary(String binary) {
      this.binary = binary;
      return this;
    }

    /**
     * Paths beyond the root where children may write, each one {@code subpath} rule. Each must
     * exist, and is resolved once, when the runner is built (symbolic links followed).
     */
    public Builder writablePaths(String... paths) {
      extraWritable.addAll(List.of(paths));
      return this;
    }

    /** The host's {@code os.name} (default: this JVM's); for tests. */
    Builder osName(String osName) {
      this.osName = osName;
      return this;
    }

    /** Where the host environment (PATH included) comes from (default: this JVM's); for tests. */
    Builder hostEnvironment(Supplier<Map<String, String>> hostEnvironment) {
      this.hostEnvironment = Objects.requireNonNull(hostEnvironment, "hostEnvironment");
      return this;
    }

    /**
     * The runner, in the seed's order: the host, the binary, the root, the writable paths.
     *
     * @throws SandboxException NOT_AVAILABLE off macOS (before anything else is looked at), or when
     *     {@code sandbox-exec} is not found or the binary given is not executable; VALIDATION when
     *     the root is null or empty, or when the root or a writable path is empty, cannot be named
     *     as a path here, or does not exist ("path %q must exist")
     */
    public SeatbeltRunner build() {
      Optional<String> offMac = hostUnavailability(osName);
      if (offMac.isPresent()) {
        throw SandboxException.of(Kind.NOT_AVAILABLE, offMac.get());
      }
      String sandboxExec = resolveBinary();
      if (rootDir == null || rootDir.isEmpty()) {
        throw SandboxException.of(Kind.VALIDATION, "seatbelt runner root must be set");
      }
      Path resolvedRoot = resolveExisting(rootDir);
      Set<String> paths = new LinkedHashSet<>();
      paths.add(resolvedRoot.toString());
      for (String w : extraWritable) {
        if (w == null || w.isEmpty()) {
          throw SandboxException.of(Kind.VALIDATION, "seatbelt: empty writable path");
        }
        paths.add(resolveExisting(w).toString());
      }
      return new SeatbeltRunner(
          resolvedRoot, new ArrayList<>(paths), sandboxExec, hostEnvironment, NO_ENGINE);
    }

    private String resolveBinary() {
      if (binary == null || binary.isEmpty()) {
        return lookPath(SANDBOX_EXEC)
            .orElseThrow(
                () ->
                    SandboxException.of(
                        Kind.NOT_AVAILABLE,
                        "seatbelt: sandbox-exec not found on PATH; this macOS installation cannot"
                            + " enforce Seatbelt profiles"));
      }
      if (binary.contains("/")) {
        if (!isExecutableFile(binary)) {
          throw SandboxException.of(
              Kind.NOT_AVAILABLE,
              "seatbelt: binary " + SandboxException.quote(binary) + " not executable");
        }
        return binary;
      }
      return lookPath(binary)
          .orElseThrow(
              () ->
                  SandboxException.of(
                      Kind.NOT_AVAILABLE,
                      "seatbelt: binary "
                          + SandboxException.quote(binary)
                          + " not executable: not found on PATH"));
    }

    /** {@code name} on the host's PATH, as {@link ProgramLookup#onPath} finds it. */
    private Optional<String> lookPath(String name) {
      return ProgramLookup.onPath(name, hostEnvironment.get().get("PATH")).map(Path::toString);
    }

    private static boolean isExecutableFile(String file) {
      try {
        return ProgramLookup.whyNotExecutable(Path.of(file)) == null;
      } catch (InvalidPathException e) {
        return false;
      }
    }

    /** {@code path} made absolute, normalised and symlink-resolved: it must exist. */
    private static Path resolveExisting(String path) {
      try {
        return Path.of(path).toAbsolutePath().normalize().toRealPath();
      } catch (InvalidPathException e) {
        throw SandboxException.of(
            Kind.VALIDATION,
            "seatbelt: path "
                + SandboxException.quote(path)
                + " cannot be named as a path here: "
                + e.getMessage(),
            e);
      } catch (IOException e) {
        throw SandboxException.of(
            Kind.VALIDATION,
            "seatbelt: path " + SandboxException.quote(path) + " must exist: " + e,
            e);
      }
    }
  }
}
