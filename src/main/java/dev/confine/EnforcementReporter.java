package dev.confine;

import java.util.List;

/**
 * A runner that reports what it really enforces on this host: in short ({@link #enforcement()}) and
 * row by row, with the mechanism or the reason ({@link #capabilities()}, what {@code confine
 * doctor} prints).
 */
public interface EnforcementReporter {
  /** What this runner enforces here; never null. */
  Enforcement enforcement();

  /**
   * Every policy dimension this runner knows, whether it holds here, and by which mechanism or why
   * not; never null. By default the rows {@link Capability#rowsOf(Enforcement)} makes of {@link
   * #enforcement()}, which name no mechanism: backends override it with their own.
   */
  default List<Capability> capabilities() {
    return Capability.rowsOf(enforcement());
  }
}
