package dev.confine;

/**
 * How a {@link LocalRunner} enforces memory, CPU and process caps, and how it holds every tree
 * (capped or not) beyond its process group so that nothing of it outlives its exec.
 */
public enum CapsMechanism {
  /**
   * Caps by cgroups where the host allows memory caps through them (v2 with controllers, else v1),
   * else by the /proc sampler, else none. Every tree is held by a cgroup of that hierarchy where
   * one can be made (even one that cannot cap memory: a v2 cgroup without controllers still has
   * {@code cgroup.kill}), else by the sampler's tracking, else by its process group only.
   */
  AUTO,
  /** Caps, and every tree, in the v1 hierarchies (a freezer cgroup for a tree without caps). */
  CGROUP_V1,
  /** Caps, and every tree, in the unified (v2) hierarchy. */
  CGROUP_V2,
  /**
   * The /proc sampler: memory and CPU caps from samples every 50 ms (10 ms at first), no process
   * caps, and every tree tracked by it (ancestry and sessions). Less exact than cgroups; for hosts
   * without them.
   */
  PROC_SAMPLER,
  /**
   * No caps: requests for them are NOT_AVAILABLE. Tree kill is not a cap: every tree is still
   * tracked as {@link #AUTO} would track it.
   */
  NONE
}
