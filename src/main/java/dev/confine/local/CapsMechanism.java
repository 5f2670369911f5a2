package dev.confine.local;

/** How a {@link LocalRunner} enforces memory, CPU and process caps. */
public enum CapsMechanism {
  /**
   * Cgroups where the host allows memory caps through them (v2 with controllers, else v1); else the
   * /proc sampler; else none.
   */
  AUTO,
  /** The v1 hierarchies. */
  CGROUP_V1,
  /** The unified (v2) hierarchy. */
  CGROUP_V2,
  /**
   * The /proc sampler: memory and CPU caps from samples every 50 ms (10 ms at first), no process
   * caps. Less exact than cgroups; for hosts without them.
   */
  PROC_SAMPLER,
  /** No caps: requests for them are NOT_AVAILABLE. */
  NONE
}
