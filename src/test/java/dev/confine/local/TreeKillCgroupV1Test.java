package dev.confine.local;

import dev.confine.CapsMechanism;

/** {@link TreeKillScenariosTest} under cgroup v1: a freezer cgroup the child starts in. */
class TreeKillCgroupV1Test extends TreeKillScenariosTest {
  @Override
  protected CapsMechanism mechanism() {
    return CapsMechanism.CGROUP_V1;
  }

  @Override
  protected String treeKillDetail() {
    return "cgroup v1 freezer";
  }

  @Override
  protected boolean raceFree() {
    return true;
  }
}
