package dev.confine.linux;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.CapsMechanism;
import dev.confine.Enforcement;
import dev.confine.ExecOptions;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.cgroup.CgroupGuard;
import dev.confine.linux.cgroup.Cgroups;
import dev.confine.linux.proc.SamplerGuard;
import dev.confine.linux.sys.EngineException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.linux.tree.TreeLimits;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * How the runners that run host processes ({@code LocalRunner}, {@code ConfinedRunner}) enforce
 * memory, CPU and process caps and hold every tree beyond its process group on this host: the
 * mechanism chosen once, from a {@link CapsMechanism} and what the host offers, the guard of each
 * exec, and the rows of the enforcement report that say what holds. Internal, not API.
 */
public final class Caps {
  private final Cgroups cgroups; // null: no cgroup caps on this host or by choice
  private final String noCgroupsReason;
  private final boolean sampler; // caps through the /proc sampler (when there are no cgroups)
  private final Tracking tracking;

  /**
   * How every tree is held beyond its process group: a cgroup without caps ({@code cgroups}), the
   * sampler's tracking ({@code sampler}), or nothing ({@code why}).
   */
  private record Tracking(Cgroups cgroups, boolean sampler, String why) {
    static Tracking of(Cgroups cgroups, boolean samplerWorks, String why) {
      return new Tracking(cgroups, cgroups == null && samplerWorks, why);
    }
  }

  private Caps(Cgroups cgroups, String noCgroupsReason, boolean sampler, Tracking tracking) {
    this.cgroups = cgroups;
    this.noCgroupsReason = noCgroupsReason;
    this.sampler = sampler;
    this.tracking = tracking;
  }

  /**
   * The plan for {@code caps} on this host, with v2 trees beneath {@code cgroupParent} (a delegated
   * cgroup v2 directory) when it is not null. Probes the host once per choice.
   *
   * @throws SandboxException NOT_AVAILABLE when {@code cgroupParent} is given and the trees would
   *     not be made beneath it (no usable cgroup v2 there, or another mechanism chosen): a parent
   *     that is silently ignored would put the trees somewhere the caller did not ask for
   */
  public static Caps of(CapsMechanism caps, String cgroupParent) {
    Caps plan = choose(caps, cgroupParent);
    if (cgroupParent != null
        && NativeAccess.availability().isAvailable()
        && (plan.tracking.cgroups() == null || !plan.tracking.cgroups().isV2())) {
      String why =
          Cgroups.probe(Cgroups.Version.V2, path(cgroupParent))
              .unavailabilityCause()
              .orElse(
                  "the trees are tracked "
                      + (plan.tracking.cgroups() != null
                          ? "with cgroup v1"
                          : plan.tracking.sampler() ? "by the /proc sampler" : "not at all")
                      + " (caps "
                      + caps.name().toLowerCase(Locale.ROOT)
                      + ")");
      throw SandboxException.of(
          Kind.NOT_AVAILABLE, "cgroup parent " + cgroupParent + " cannot be used: " + why);
    }
    return plan;
  }

  private static Caps choose(CapsMechanism caps, String cgroupParent) {
    Cgroups cgroups = null;
    String why = "caps disabled for this runner";
    boolean sampler = false;
    Tracking tracking = new Tracking(null, false, "the engine cannot run here");
    if (NativeAccess.availability().isAvailable()) {
      boolean samplerWorks = SamplerGuard.availability().isAvailable();
      switch (caps) {
        case PROC_SAMPLER -> {
          sampler = samplerWorks;
          why = sampler ? "the /proc sampler was chosen" : "/proc sampling does not work here";
          tracking = Tracking.of(null, samplerWorks, why);
        }
        case NONE -> {
          // No caps; the tree is tracked all the same, as AUTO would.
          Cgroups.Result r = Cgroups.probe(Cgroups.Version.AUTO, path(cgroupParent));
          tracking = Tracking.of(r.cgroups(), samplerWorks, r.unavailabilityCause().orElse(null));
        }
        default -> {
          Cgroups.Result r =
              Cgroups.probe(
                  switch (caps) {
                    case CGROUP_V1 -> Cgroups.Version.V1;
                    case CGROUP_V2 -> Cgroups.Version.V2;
                    default -> Cgroups.Version.AUTO;
                  },
                  path(cgroupParent));
          cgroups = r.cgroups();
          why = r.unavailabilityCause().orElse(null);
          tracking = Tracking.of(cgroups, samplerWorks, why);
          if (caps == CapsMechanism.AUTO
              && (cgroups == null || !cgroups.memory().available())
              && samplerWorks) {
            // The sampler caps memory; a cgroup that cannot still holds the tree.
            why =
                cgroups == null
                    ? why
                    : "cgroups cannot cap memory here: " + cgroups.memory().detail();
            cgroups = null;
            sampler = true;
          }
        }
      }
    }
    return new Caps(cgroups, why, sampler, tracking);
  }

  /** A plan with nothing: no caps, no tracking, for {@code why}. */
  public static Caps unavailable(String why) {
    return new Caps(null, why, false, new Tracking(null, false, why));
  }

  /** Sets what this plan enforces on {@code b}: memory, CPU budget, process caps, CPU throttle. */
  public Enforcement.Builder enforcement(Enforcement.Builder b) {
    return b.memoryCap(sampler || (cgroups != null && cgroups.memory().available()))
        .cpuCap(sampler || (cgroups != null && cgroups.cpuAccounting().available()))
        .pidsCap(cgroups != null && cgroups.pids().available())
        .cpuThrottle(!sampler && cgroups != null && cgroups.cpuThrottle().available());
  }

  /**
   * Adds the rows memory, cpu, cpu throttle, pids and tree kill to {@code rows}.
   *
   * @param engine why the engine cannot run here, or null
   * @param treeKillCaveat what the tree-kill row adds when a cgroup holds every tree: whether the
   *     children can leave it
   */
  public void addRows(List<Capability> rows, String engine, String treeKillCaveat) {
    if (sampler) {
      String how =
          "/proc sampler every 50 ms (10 ms in the first 100 ms), kill on overflow, fail-closed"
              + " after 3 failed samples; approximate: a fast allocator can overshoot between"
              + " samples, and the caps count the processes the sampler sees (by ancestry and the"
              + " sessions the tree made: not one that left every known session and was orphaned"
              + " before a sample saw it) (no usable cgroups: "
              + noCgroupsReason
              + ")";
      rows.add(
          new Capability(
              Dimension.MEMORY,
              true,
              "aggregate RSS from "
                  + how
                  + "; counted: each member's resident anonymous, file-backed and mapped shared"
                  + " memory (/proc stat rss = RssAnon + RssFile + RssShmem; a page shared by"
                  + " members counts once per member); not counted: shared memory and tmpfs files"
                  + " (/dev/shm, memfd, SysV segments) that no member maps, which /proc attributes"
                  + " to no process"));
      rows.add(
          new Capability(
              Dimension.CPU,
              true,
              "budget (the tree is killed once it is spent) from user+system time, " + how));
      rows.add(new Capability(Dimension.CPU_THROTTLE, false, "needs a cgroup cpu controller"));
      rows.add(new Capability(Dimension.PIDS, false, "needs cgroups: " + noCgroupsReason));
    } else if (cgroups == null) {
      String why = engine != null ? engine : noCgroupsReason;
      for (Dimension d :
          List.of(Dimension.MEMORY, Dimension.CPU, Dimension.CPU_THROTTLE, Dimension.PIDS)) {
        rows.add(new Capability(d, false, why));
      }
    } else {
      rows.add(row(Dimension.MEMORY, cgroups.memory()));
      Cgroups.Capability cpu = cgroups.cpuAccounting();
      rows.add(
          new Capability(
              Dimension.CPU,
              cpu.available(),
              cpu.available()
                  ? "budget (the tree is killed once it is spent, never throttled) from "
                      + cpu.detail()
                  : cpu.detail()));
      rows.add(row(Dimension.CPU_THROTTLE, cgroups.cpuThrottle()));
      rows.add(row(Dimension.PIDS, cgroups.pids()));
    }
    rows.add(treeKillRow(engine, treeKillCaveat));
  }

  /** What the sampler's tracking cannot see, said wherever it tracks a tree. */
  public static final String SAMPLER_TRACKING =
      "/proc sampler: members by ancestry (children files) and by the sessions the tree made"
          + " (a /proc scan), a last look when the leader exits, every member stopped, then"
          + " killed; approximate: it cannot see a process that left every known session and was"
          + " orphaned before any sample saw it (a daemon's double fork within the first"
          + " milliseconds, or between two samples)";

  private Capability treeKillRow(String engine, String caveat) {
    if (engine != null) {
      return new Capability(Dimension.TREE_KILL, false, engine);
    }
    if (tracking.cgroups() != null) {
      return new Capability(
          Dimension.TREE_KILL,
          true,
          "every exec and session, capped or not: "
              + tracking.cgroups().treeKill().detail()
              + "; "
              + caveat);
    }
    if (tracking.sampler()) {
      return new Capability(
          Dimension.TREE_KILL,
          true,
          "every exec and session, capped or not: "
              + SAMPLER_TRACKING
              + " (no usable cgroups: "
              + tracking.why()
              + ")");
    }
    return new Capability(
        Dimension.TREE_KILL,
        false,
        "process group only: no cgroup can be made ("
            + tracking.why()
            + ") and /proc sampling"
            + " does not work here");
  }

  private static Capability row(Dimension dimension, Cgroups.Capability c) {
    return new Capability(dimension, c.available(), c.detail());
  }

  /**
   * The guard of one exec or session: its caps where {@code opts} asks for some, the tree held as
   * well as this host allows either way.
   *
   * @throws SandboxException NOT_AVAILABLE when its cgroup cannot be made
   */
  public TreeGuard guardFor(String cmd, ExecOptions opts) {
    ResourceLimits r = opts.resources();
    boolean capped =
        r.memoryBytes() > 0
            || r.maxProcesses() > 0
            || r.cpuMillicores() > 0
            || r.cpuThrottleMillicores() > 0;
    long budget = 0;
    if (r.cpuMillicores() > 0) {
      // The seed's budget: timeout x millicores / 1000, saturating.
      double nanos = (double) opts.timeout().toNanos() * r.cpuMillicores() / 1000.0;
      budget = nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) nanos;
    }
    try {
      if (!capped) {
        return tracker();
      }
      if (sampler) {
        return new SamplerGuard(
            r.memoryBytes(),
            budget,
            tracking.cgroups() == null
                ? null
                : new CgroupGuard(tracking.cgroups(), TreeLimits.NONE));
      }
      return new CgroupGuard(
          cgroups,
          new TreeLimits(r.memoryBytes(), r.maxProcesses(), r.cpuThrottleMillicores(), budget));
    } catch (EngineException e) {
      throw SandboxException.of(
          Kind.NOT_AVAILABLE,
          "exec "
              + cmd
              + ": "
              + (capped ? "resource caps" : "tracking the process tree")
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** The guard of an exec without caps: its tree held as well as this host allows. */
  private TreeGuard tracker() {
    if (tracking.cgroups() != null) {
      return new CgroupGuard(tracking.cgroups(), TreeLimits.NONE);
    }
    return tracking.sampler() ? new SamplerGuard(0, 0) : TreeGuard.NONE;
  }

  private static Path path(String p) {
    return p == null ? null : Path.of(p);
  }
}
