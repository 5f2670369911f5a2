package dev.confine.local;

import dev.confine.linux.Spawner;

/**
 * {@link TreeKillScenariosTest} under cgroup v2 ({@code cgroup.kill}, which even a v2 hierarchy
 * without controllers has): race-free with clone3 CLONE_INTO_CGROUP (glibc 2.39+), else the child
 * is moved right after the spawn, so the scenarios fork only once it is in.
 */
class TreeKillCgroupV2Test extends TreeKillScenariosTest {
  @Override
  CapsMechanism mechanism() {
    return CapsMechanism.CGROUP_V2;
  }

  @Override
  String treeKillDetail() {
    return "cgroup v2";
  }

  @Override
  boolean raceFree() {
    return Spawner.canSpawnIntoCgroup();
  }

  @Override
  String settle() {
    return raceFree() ? "" : "sleep 0.3; ";
  }

  @Override
  String blindSpot() {
    return "a process it forks and detaches in that instant can escape";
  }
}
