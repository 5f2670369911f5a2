package dev.confine.local;

/** {@link TreeKillScenariosTest} under cgroup v1: a freezer cgroup the child starts in. */
class TreeKillCgroupV1Test extends TreeKillScenariosTest {
  @Override
  CapsMechanism mechanism() {
    return CapsMechanism.CGROUP_V1;
  }

  @Override
  String treeKillDetail() {
    return "cgroup v1 freezer";
  }

  @Override
  boolean raceFree() {
    return true;
  }
}
