package dev.confine.local;

/** How a {@link LocalRunner} enforces memory, CPU and process caps. */
public enum CapsMechanism {
  /** Cgroups where the host allows them (v2 with controllers, else v1); else none. */
  AUTO,
  /** The v1 hierarchies. */
  CGROUP_V1,
  /** The unified (v2) hierarchy. */
  CGROUP_V2,
  /** No caps: requests for them are NOT_AVAILABLE. */
  NONE
}
