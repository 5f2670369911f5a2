package dev.confine;

/** A runner that reports what it really enforces on this host. */
public interface EnforcementReporter {
  /** What this runner enforces here; never null. */
  Enforcement enforcement();
}
