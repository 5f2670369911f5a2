package dev.confine.local;

import dev.confine.CapsMechanism;
import dev.confine.linux.spawn.Spawner;

/**
 * {@link TreeKillScenariosTest} under cgroup v2 ({@code cgroup.kill}, which even a v2 hierarchy
 * without controllers has): race-free with clone3 CLONE_INTO_CGROUP (glibc 2.39+), else the child
 * is moved right after the spawn, so the scenarios fork only once it is in.
 */
class TreeKillCgroupV2Test extends TreeKillScenariosTest {
  @Override
  protected CapsMechanism mechanism() {
    return CapsMechanism.CGROUP_V2;
  }

  @Override
  protected String treeKillDetail() {
    return "cgroup v2";
  }

  @Override
  protected boolean raceFree() {
    return Spawner.spawnIntoCgroupAvailability().isAvailable();
  }

  @Override
  protected String settle() {
    return raceFree() ? "" : "sleep 0.3; ";
  }

  @Override
  protected String blindSpot() {
    return "a process it forks and detaches in that instant can escape";
  }
}
