package dev.confine.linux.cgroup;

import dev.confine.linux.cgroup.Cgroups.Capability;
import dev.confine.linux.cgroup.Cgroups.Placement;
import dev.confine.linux.cgroup.Cgroups.Result;
import dev.confine.linux.cgroup.Cgroups.Version;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.tree.TreeLimits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.regex.Matcher;

/**
 * Finds which cgroups this host offers for each choice of hierarchy, and says what each can enforce
 * and how, or why not ({@link Cgroups.Capability}): once per JVM and choice. The first probe of a
 * choice also removes the tree cgroups that JVMs killed before they could clean up left behind.
 */
final class CgroupProbe {
  private CgroupProbe() {}

  private record ProbeKey(Version version, Path delegatedParent) {}

  private static final Map<ProbeKey, Result> PROBED = new ConcurrentHashMap<>();

  /**
   * Probes this host once per JVM for each choice: discovers the layout, checks that tree cgroups
   * can be created where they would go, and removes trees left by JVMs that died. Later calls with
   * the same arguments return the first answer, so runners are cheap to build.
   *
   * @param version which hierarchy to use
   * @param delegatedParent a v2 cgroup directory (absolute, under the v2 mount) to create trees in
   *     instead of the process's own cgroup; null for none
   * @return the cgroups of this host, or empty with the reason when none can be used
   */
  static Result probe(Version version, Path delegatedParent) {
    return PROBED.computeIfAbsent(
        new ProbeKey(version, delegatedParent), k -> probeNow(k.version(), k.delegatedParent()));
  }

  /** Runs {@code action} for every usable {@link Cgroups} probed so far. */
  static void forEachProbed(Consumer<Cgroups> action) {
    for (Result r : PROBED.values()) {
      if (r.cgroups() != null) {
        action.accept(r.cgroups());
      }
    }
  }

  private static Result probeNow(Version version, Path delegatedParent) {
    CgroupLayout layout;
    try {
      layout = CgroupLayout.discover();
    } catch (IOException e) {
      return new Result(null, "cannot read the cgroup layout: " + e.getMessage());
    }
    boolean v2HasControllers =
        layout.v2().map(h -> h.controllers().containsAll(Set.of("memory", "pids"))).orElse(false);
    boolean useV2 =
        switch (version) {
          case V2 -> true;
          case V1 -> false;
          case AUTO ->
              v2HasControllers || (layout.v2().isPresent() && !layout.v1().containsKey("memory"));
        };
    if (useV2 && layout.v2().isEmpty()) {
      return new Result(null, "no cgroup v2 hierarchy is mounted (" + layout.mode() + " layout)");
    }
    if (!useV2 && V1TreeCgroup.trackerController(layout.v1()) == null) {
      return new Result(
          null,
          "no cgroup v1 hierarchy that can hold a tree (freezer, cpuacct, pids or cpu) is mounted ("
              + layout.mode()
              + " layout)");
    }
    Result r = useV2 ? probeV2(layout, delegatedParent) : probeV1(layout);
    r.get().ifPresent(CgroupProbe::removeStaleTrees);
    return r;
  }

  private static Result probeV1(CgroupLayout layout) {
    Map<String, CgroupLayout.Hierarchy> v1 = layout.v1();
    String name = Cgroups.nextName();
    try {
      V1TreeCgroup probe = V1TreeCgroup.create(v1, name, TreeLimits.NONE);
      probe.remove();
    } catch (IOException e) {
      return new Result(null, "cannot create a cgroup beneath this process's v1 cgroups: " + e);
    }
    String placed = "; placement race-free (per-thread tasks)";
    Capability memory =
        v1.containsKey("memory")
            ? Capability.yes(
                "cgroup v1 memory.limit_in_bytes"
                    + (Files.exists(
                            v1.get("memory").ownPath().resolve("memory.memsw.limit_in_bytes"))
                        ? " and memory.memsw.limit_in_bytes"
                        : "")
                    + " under "
                    + v1.get("memory").ownPath()
                    + "; placement: the child starts in the tree's other cgroups and is moved into"
                    + " its memory cgroup right after the spawn, with whatever it forked (no JVM"
                    + " thread ever sits in a memory cgroup; what the child's exec allocated before"
                    + " the move is charged to this process's)")
            : Capability.no("no v1 memory hierarchy is mounted");
    Capability pids =
        v1.containsKey("pids")
            ? Capability.yes("cgroup v1 pids.max under " + v1.get("pids").ownPath() + placed)
            : Capability.no("no v1 pids hierarchy is mounted");
    Capability acct =
        v1.containsKey("cpuacct")
            ? Capability.yes(
                "cgroup v1 cpuacct.usage under " + v1.get("cpuacct").ownPath() + placed)
            : Capability.no("no v1 cpuacct hierarchy is mounted");
    Capability throttle =
        v1.containsKey("cpu")
            ? Capability.yes("cgroup v1 cpu.cfs_quota_us under " + v1.get("cpu").ownPath())
            : Capability.no("no v1 cpu hierarchy is mounted");
    String tracker = V1TreeCgroup.trackerController(v1);
    Capability kill =
        tracker.equals("freezer")
            ? Capability.yes(
                "cgroup v1 freezer under "
                    + v1.get("freezer").ownPath()
                    + " (a pooled tree cgroup): freeze, SIGKILL every member, thaw"
                    + placed)
            : Capability.yes(
                "cgroup v1 "
                    + tracker
                    + " under "
                    + v1.get(tracker).ownPath()
                    + " (a pooled tree cgroup; no freezer): SIGKILL every member until empty"
                    + placed);
    return new Result(
        new Cgroups(layout, false, null, memory, pids, acct, throttle, kill, Placement.THREAD_MOVE),
        null);
  }

  private static Result probeV2(CgroupLayout layout, Path delegatedParent) {
    CgroupLayout.Hierarchy h = layout.v2().orElseThrow();
    Path parent = delegatedParent != null ? delegatedParent : h.ownPath();
    if (!parent.startsWith(h.mountPoint())) {
      return new Result(null, parent + " is not beneath the cgroup v2 mount " + h.mountPoint());
    }
    Set<String> available;
    // The probe cgroup below also proves that this process may create cgroups here.
    try {
      available = Set.of(TreeCgroup.read(parent.resolve("cgroup.controllers")).split("\\s+"));
    } catch (IOException e) {
      return new Result(null, "cannot read " + parent.resolve("cgroup.controllers") + ": " + e);
    }
    List<String> enabled = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    for (String c : List.of("memory", "pids", "cpu")) {
      if (!available.contains(c)) {
        continue;
      }
      try {
        Files.writeString(parent.resolve("cgroup.subtree_control"), "+" + c);
        enabled.add(c);
      } catch (IOException e) {
        refused.add(c + " (" + e.getMessage() + ")");
      }
    }
    String name = Cgroups.nextName();
    boolean hasKill;
    try {
      V2TreeCgroup probe = V2TreeCgroup.create(h.mountPoint(), parent, name, TreeLimits.NONE);
      hasKill = Files.exists(probe.path().resolve("cgroup.kill"));
      probe.remove();
    } catch (IOException e) {
      return new Result(null, "cannot create a cgroup beneath " + parent + ": " + e);
    }
    Placement placement =
        Spawner.spawnIntoCgroupAvailability().isAvailable()
            ? Placement.CLONE_INTO_CGROUP
            : Placement.POST_SPAWN;
    String placed =
        placement == Placement.CLONE_INTO_CGROUP
            ? "; placement race-free (clone3 CLONE_INTO_CGROUP)"
            : "; placement post-spawn (glibc "
                + "older than 2.39 has no posix_spawnattr_setcgroup_np: the child is moved right"
                + " after the spawn, and its session swept when it may have forked by then; a"
                + " process it forks and detaches in that instant can escape)";
    String why =
        refused.isEmpty()
            ? "cgroup v2 "
                + parent
                + " does not offer the controller (cgroup.controllers: "
                + String.join(" ", available).trim()
                + ")"
            : "cgroup v2 "
                + parent
                + " refused to delegate "
                + String.join(", ", refused)
                + "; a cgroup that holds processes cannot enable controllers for its children:"
                + " start the JVM in a delegated cgroup and name an empty child of it as the parent";
    Capability memory =
        enabled.contains("memory")
            ? Capability.yes(
                "cgroup v2 memory.max, memory.swap.max=0, memory.oom.group=1 under "
                    + parent
                    + placed)
            : Capability.no(why.replace("the controller", "the memory controller"));
    Capability pids =
        enabled.contains("pids")
            ? Capability.yes("cgroup v2 pids.max under " + parent + placed)
            : Capability.no(why.replace("the controller", "the pids controller"));
    Capability acct = Capability.yes("cgroup v2 cpu.stat usage_usec under " + parent + placed);
    Capability throttle =
        enabled.contains("cpu")
            ? Capability.yes("cgroup v2 cpu.max under " + parent)
            : Capability.no(why.replace("the controller", "the cpu controller"));
    Capability kill =
        hasKill
            ? Capability.yes("cgroup v2 cgroup.kill (a tree cgroup under " + parent + ")" + placed)
            : Capability.yes(
                "cgroup v2 cgroup.procs (a tree cgroup under "
                    + parent
                    + "): SIGKILL every member until empty (no cgroup.kill before Linux 5.14)"
                    + placed);
    return new Result(
        new Cgroups(layout, true, parent, memory, pids, acct, throttle, kill, placement), null);
  }

  /**
   * Removes the tree cgroups where {@code cgroups} makes its own whose JVM is gone (killed before
   * it could clean up).
   */
  static void removeStaleTrees(Cgroups cgroups) {
    for (Path parent : cgroups.treeParents()) {
      try (var dirs = Files.newDirectoryStream(parent, "confine-*")) {
        for (Path d : dirs) {
          Matcher m = Cgroups.TREE_NAME.matcher(d.getFileName().toString());
          if (!m.matches()) {
            continue;
          }
          long owner = Long.parseLong(m.group(1));
          if (owner == Cgroups.JVM_PID || ProcessHandle.of(owner).isPresent()) {
            continue;
          }
          removeStale(cgroups, d);
        }
      } catch (IOException e) {
        // nothing stale to see here
      }
    }
  }

  private static void removeStale(Cgroups cgroups, Path dir) {
    try {
      cgroups.adopt(dir).remove();
    } catch (IOException | RuntimeException e) {
      // left for a later start; it holds nothing of ours
    }
  }
}
