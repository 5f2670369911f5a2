package dev.confine.linux.cgroup;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.tree.TreeLimits;
import dev.confine.testing.HostRequirements;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CgroupsTest {
  private static Cgroups v1() {
    Cgroups.Result r = Cgroups.probe(Cgroups.Version.V1, null);
    HostRequirements.require(r.prefixed("no usable cgroup v1 hierarchy: "));
    return r.cgroups();
  }

  @Test
  void aProbeRunsOncePerJvmAndChoice() {
    Cgroups.Result first = Cgroups.probe(Cgroups.Version.V1, null);
    assertThat(Cgroups.probe(Cgroups.Version.V1, null)).isSameAs(first);
  }

  @Test
  void staleTreesOfADeadJvmAreKilledAndRemoved() throws Exception {
    Cgroups cgroups = v1();
    Path freezerRoot = cgroups.layout().v1().get("freezer").ownPath();
    Path acctRoot = cgroups.layout().v1().get("cpuacct").ownPath();
    Process dead = new ProcessBuilder("true").start();
    dead.waitFor();
    String name = "confine-" + dead.pid() + "-1";
    Path freezer = Files.createDirectory(freezerRoot.resolve(name));
    Path acct = Files.createDirectory(acctRoot.resolve(name));
    Process orphan = new ProcessBuilder("sleep", "100").start();
    Files.writeString(freezer.resolve("cgroup.procs"), Long.toString(orphan.pid()));

    CgroupProbe.removeStaleTrees(cgroups); // what the first probe of a JVM does

    assertThat(freezer).doesNotExist();
    assertThat(acct).doesNotExist();
    assertThat(orphan.waitFor(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void treesOfThisJvmAreNotStale() throws Exception {
    Cgroups cgroups = v1();
    TreeCgroup mine = cgroups.create(TreeLimits.NONE);
    try {
      CgroupProbe.removeStaleTrees(cgroups);
      assertThat(mine.path()).exists();
    } finally {
      mine.remove();
    }
    assertThat(mine.path()).doesNotExist();
  }

  @Test
  void theJanitorKillsWhatIsLeftAndRemovesTheTree() throws Exception {
    Cgroups cgroups = v1();
    TreeCgroup cg = cgroups.create(TreeLimits.NONE);
    Process straggler = new ProcessBuilder("sleep", "100").start();
    Files.writeString(cg.path().resolve("cgroup.procs"), Long.toString(straggler.pid()));
    CgroupJanitor.remove(cg);
    assertThat(CgroupJanitor.awaitIdle(java.time.Duration.ofSeconds(10))).isTrue();
    assertThat(cg.path()).doesNotExist();
    assertThat(straggler.waitFor(5, TimeUnit.SECONDS)).isTrue();
  }
}
