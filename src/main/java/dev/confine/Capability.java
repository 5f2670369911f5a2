package dev.confine;

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
