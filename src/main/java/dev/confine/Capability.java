package dev.confine;

import java.util.List;
import java.util.Objects;

/**
 * One row of what a runner enforces on this host, for reports such as {@code confine doctor}.
 *
 * @param dimension the policy dimension
 * @param enforced whether it holds here
 * @param detail the mechanism when enforced, the reason when not
 */
public record Capability(Dimension dimension, boolean enforced, String detail) {
  /**
   * Requires every component.
   *
   * @throws NullPointerException when {@code dimension} or {@code detail} is null
   */
  public Capability {
    Objects.requireNonNull(dimension, "dimension");
    Objects.requireNonNull(detail, "detail");
  }

  /**
   * The rows of {@code runner}: its own {@link EnforcementReporter#capabilities()} when it reports,
   * else those of {@link Enforcement#NONE} (also for null).
   */
  public static List<Capability> rowsOf(Runner runner) {
    return runner instanceof EnforcementReporter r ? r.capabilities() : rowsOf(Enforcement.NONE);
  }

  /**
   * The rows {@code enforcement} says something about (environment, filesystem bounds, the network
   * modes and the caps), in {@link Dimension} order, naming no mechanism: for runners that report
   * no rows of their own.
   */
  public static List<Capability> rowsOf(Enforcement enforcement) {
    Enforcement e = Objects.requireNonNull(enforcement, "enforcement");
    return List.of(
        reported(Dimension.ENV, e.envAllowList()),
        reported(Dimension.FILESYSTEM_BOUNDS, e.filesystemBounds()),
        reported(Dimension.NET_DENY_ALL, e.enforces(NetMode.DENY_ALL)),
        reported(Dimension.NET_ALLOW_LIST, e.enforces(NetMode.ALLOW_LIST)),
        reported(Dimension.NET_PROXY, e.enforces(NetMode.PROXY)),
        reported(Dimension.MEMORY, e.memoryCap()),
        reported(Dimension.CPU, e.cpuCap()),
        reported(Dimension.CPU_THROTTLE, e.cpuThrottle()),
        reported(Dimension.PIDS, e.pidsCap()),
        reported(Dimension.DISK, e.diskCap()));
  }

  private static Capability reported(Dimension d, boolean enforced) {
    return new Capability(
        d,
        enforced,
        enforced ? "enforced (the runner names no mechanism)" : "not enforced by this runner");
  }

  /**
   * A policy dimension a runner reports on, in the order the confined runner reports them; each
   * carries the {@link #label()} reports print.
   */
  public enum Dimension {
    /** Starting a child at all. */
    SPAWN("spawn"),
    /** The environment allow-list ({@link EnvPolicy}). */
    ENV("env"),
    /** Writes confined to the root and the writable paths. */
    FILESYSTEM_BOUNDS("filesystem bounds"),
    /** Which terminals and devices a child may open. */
    TERMINALS("terminals"),
    /** The Linux capabilities a child holds. */
    CAPABILITIES("capabilities"),
    /** The user a child runs as. */
    USER("user"),
    /** What a child may do to processes outside its tree. */
    OTHER_PROCESSES("other processes"),
    /** Whether a child can signal processes outside its sandbox. */
    SIGNAL_SCOPING("signal scoping"),
    /** {@link NetMode#DENY_ALL}. */
    NET_DENY_ALL("net deny_all"),
    /** {@link NetMode#ALLOW_LIST}. */
    NET_ALLOW_LIST("net allow_list"),
    /** {@link NetMode#PROXY}. */
    NET_PROXY("net proxy"),
    /** Every mount read-only outside the writable paths. */
    READ_ONLY_HOST("read-only host"),
    /** The no_new_privs bit on every child. */
    NO_NEW_PRIVS("no_new_privs"),
    /** {@link ResourceLimits#memoryBytes()}. */
    MEMORY("memory"),
    /** {@link ResourceLimits#cpuMillicores()}, a budget. */
    CPU("cpu"),
    /** {@link ResourceLimits#cpuThrottleMillicores()}. */
    CPU_THROTTLE("cpu throttle"),
    /** {@link ResourceLimits#maxProcesses()}. */
    PIDS("pids"),
    /** Holding and killing a child's whole tree, beyond its process group. */
    TREE_KILL("tree kill"),
    /** {@link ResourceLimits#diskBytes()}. */
    DISK("disk");

    private final String label;

    Dimension(String label) {
      this.label = label;
    }

    /** The name reports print: lower case, words apart ("tree kill", "net deny_all"). */
    public String label() {
      return label;
    }
  }
}
