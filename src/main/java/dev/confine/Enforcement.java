package dev.confine;

import java.util.List;

/**
 * What a runner really enforces on this host: false means "not enforced", never "unknown". A
 * decorator reports exactly its inner runner's enforcement (and its {@link Capability} rows).
 *
 * @param envAllowList whether {@link EnvPolicy#allow()} is honoured
 * @param netModes the non-default {@link NetMode}s enforced at the OS level ({@code DEFAULT} is
 *     never listed)
 * @param socks5 whether the filtering proxy can dial a socks5 upstream (no backend yet)
 * @param mitm whether the proxy can terminate TLS for CONNECT with a temporary CA (no backend yet)
 * @param unixSocketPolicy whether unix-socket egress is confined to an allow-list (no backend yet)
 * @param memoryCap whether {@link ResourceLimits#memoryBytes()} is enforced
 * @param cpuCap whether {@link ResourceLimits#cpuMillicores()} is enforced
 * @param diskCap whether {@link ResourceLimits#diskBytes()} is enforced (no backend does)
 * @param filesystemBounds whether writes are confined to the root at the OS level
 * @param pidsCap whether {@link ResourceLimits#maxProcesses()} is enforced
 * @param cpuThrottle whether {@link ResourceLimits#cpuThrottleMillicores()} is enforced
 */
public record Enforcement(
    boolean envAllowList,
    List<NetMode> netModes,
    boolean socks5,
    boolean mitm,
    boolean unixSocketPolicy,
    boolean memoryCap,
    boolean cpuCap,
    boolean diskCap,
    boolean filesystemBounds,
    boolean pidsCap,
    boolean cpuThrottle) {

  /** Nothing enforced: the report of a runner that does not report. */
  public static final Enforcement NONE =
      new Enforcement(
          false, List.of(), false, false, false, false, false, false, false, false, false);

  /** A report without a CPU throttle (the components before it). */
  public Enforcement(
      boolean envAllowList,
      List<NetMode> netModes,
      boolean socks5,
      boolean mitm,
      boolean unixSocketPolicy,
      boolean memoryCap,
      boolean cpuCap,
      boolean diskCap,
      boolean filesystemBounds,
      boolean pidsCap) {
    this(
        envAllowList,
        netModes,
        socks5,
        mitm,
        unixSocketPolicy,
        memoryCap,
        cpuCap,
        diskCap,
        filesystemBounds,
        pidsCap,
        false);
  }

  /**
   * Copies the mode list.
   *
   * @throws IllegalArgumentException when {@code netModes} lists {@link NetMode#DEFAULT} or a mode
   *     twice
   */
  public Enforcement {
    netModes = netModes == null ? List.of() : List.copyOf(netModes);
    if (netModes.contains(NetMode.DEFAULT)) {
      throw new IllegalArgumentException("netModes never lists DEFAULT");
    }
    if (netModes.stream().distinct().count() != netModes.size()) {
      throw new IllegalArgumentException("netModes lists a mode twice: " + netModes);
    }
  }

  /**
   * The report of {@code runner}: its own when it is an {@link EnforcementReporter}, else {@link
   * #NONE} (also for null).
   */
  public static Enforcement of(Runner runner) {
    return runner instanceof EnforcementReporter r ? r.enforcement() : NONE;
  }

  /** Whether {@code mode} is enforced; always true for {@link NetMode#DEFAULT}. */
  public boolean enforces(NetMode mode) {
    return mode == NetMode.DEFAULT || netModes.contains(mode);
  }

  /** A builder starting from {@link #NONE}. */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds an {@link Enforcement}. */
  public static final class Builder {
    private boolean envAllowList;
    private List<NetMode> netModes = List.of();
    private boolean socks5;
    private boolean mitm;
    private boolean unixSocketPolicy;
    private boolean memoryCap;
    private boolean cpuCap;
    private boolean diskCap;
    private boolean filesystemBounds;
    private boolean pidsCap;
    private boolean cpuThrottle;

    private Builder() {}

    /** Sets {@link Enforcement#envAllowList()}. */
    public Builder envAllowList(boolean v) {
      envAllowList = v;
      return this;
    }

    /** Sets {@link Enforcement#netModes()}. */
    public Builder netModes(NetMode... modes) {
      netModes = List.of(modes);
      return this;
    }

    /** Sets {@link Enforcement#socks5()}. */
    public Builder socks5(boolean v) {
      socks5 = v;
      return this;
    }

    /** Sets {@link Enforcement#mitm()}. */
    public Builder mitm(boolean v) {
      mitm = v;
      return this;
    }

    /** Sets {@link Enforcement#unixSocketPolicy()}. */
    public Builder unixSocketPolicy(boolean v) {
      unixSocketPolicy = v;
      return this;
    }

    /** Sets {@link Enforcement#memoryCap()}. */
    public Builder memoryCap(boolean v) {
      memoryCap = v;
      return this;
    }

    /** Sets {@link Enforcement#cpuCap()}. */
    public Builder cpuCap(boolean v) {
      cpuCap = v;
      return this;
    }

    /** Sets {@link Enforcement#diskCap()}. */
    public Builder diskCap(boolean v) {
      diskCap = v;
      return this;
    }

    /** Sets {@link Enforcement#filesystemBounds()}. */
    public Builder filesystemBounds(boolean v) {
      filesystemBounds = v;
      return this;
    }

    /** Sets {@link Enforcement#pidsCap()}. */
    public Builder pidsCap(boolean v) {
      pidsCap = v;
      return this;
    }

    /** Sets {@link Enforcement#cpuThrottle()}. */
    public Builder cpuThrottle(boolean v) {
      cpuThrottle = v;
      return this;
    }

    /** The report. */
    public Enforcement build() {
      return new Enforcement(
          envAllowList,
          netModes,
          socks5,
          mitm,
          unixSocketPolicy,
          memoryCap,
          cpuCap,
          diskCap,
          filesystemBounds,
          pidsCap,
          cpuThrottle);
    }
  }
}
