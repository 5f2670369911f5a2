package dev.confine.local;

import dev.confine.linux.spawn.Spawner;
import dev.confine.testing.HostRequirements;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

/**
 * {@link TreeKillScenariosTest} under cgroup v2 with clone3 CLONE_INTO_CGROUP (glibc 2.39+): the
 * child starts in its cgroup, so every scenario, the instantly orphaned daemon included, runs with
 * no settling first. CI runs this tag inside a Debian 13 root (scripts/lib/in-newer-glibc).
 */
@Tag("newer-glibc")
class TreeKillCloneIntoCgroupTest extends TreeKillCgroupV2Test {
  @BeforeEach
  void needsCloneIntoCgroup() {
    HostRequirements.require(
        Spawner.spawnIntoCgroupAvailability().isAvailable(),
        "glibc older than 2.39 has no posix_spawnattr_setcgroup_np (run this tag under"
            + " scripts/lib/in-newer-glibc)");
  }

  @Override
  protected String treeKillDetail() {
    return "race-free (clone3 CLONE_INTO_CGROUP)";
  }
}
