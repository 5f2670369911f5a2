package dev.confine.linux.proc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.cgroup.CgroupGuard;
import dev.confine.linux.cgroup.Cgroups;
import dev.confine.linux.child.ChildOutcome;
import dev.confine.linux.child.Execution;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.tree.Cap;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.linux.tree.TreeLimits;
import dev.confine.testing.HostRequirements;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sampler's caps with a cgroup holding the tree: what AUTO does where a cgroup can be made but
 * cannot cap memory (a v2 hierarchy without delegated controllers): the cgroup spawns, finds
 * leftovers and kills, the sampler enforces the caps.
 */
@Timeout(60)
class SamplerGuardTest {
  private static final long MIB = 1 << 20;

  private static Cgroups v2() {
    Cgroups.Result r = Cgroups.probe(Cgroups.Version.V2, null);
    HostRequirements.require(r.prefixed("no usable cgroup v2 here: "));
    return r.cgroups();
  }

  private static Execution start(String script, TreeGuard guard) {
    return Execution.start(
        new SpawnSpec(
            "/bin/sh", List.of("sh", "-c", script), List.of("PATH=/usr/bin:/bin"), "/", false),
        null,
        1 << 20,
        guard);
  }

  @Test
  void aCgroupTrackerHoldsTheTreeWhileTheSamplerCapsIt() throws Exception {
    Cgroups cgroups = v2();
    // Post-spawn placement on glibc < 2.39: the escapee is forked once the shell was moved.
    Execution e =
        start(
            "sleep 0.3; grep '^0::' /proc/self/cgroup; setsid sleep 137 & echo $!; sleep 0.3",
            new SamplerGuard(0, 0, new CgroupGuard(cgroups, TreeLimits.NONE)));
    ChildOutcome c = e.runToCompletion(Long.MAX_VALUE, 2_000_000_000L);
    String out = new String(e.stdout(), StandardCharsets.UTF_8);
    assertThat(out.lines().findFirst().orElseThrow()).containsPattern("confine-\\d+-\\d+$");
    assertThat(c.leftoversKilled()).isTrue();
    int escapee = Integer.parseInt(out.lines().skip(1).findFirst().orElseThrow().trim());
    SpawnedTree.await(
        () -> ProcessHandle.of(escapee).isEmpty() || zombie(escapee),
        java.time.Duration.ofSeconds(5),
        "the escapee dead");
  }

  @Test
  void theSamplerStillEnforcesTheMemoryCapWithATracker() {
    Cgroups cgroups = v2();
    Execution e =
        start(
            "head -c 1073741824 /dev/zero | tail",
            new SamplerGuard(64 * MIB, 0, new CgroupGuard(cgroups, TreeLimits.NONE)));
    ChildOutcome c = e.runToCompletion(Long.MAX_VALUE, 2_000_000_000L);
    assertThat(c.exceeded()).isEqualTo(Cap.MEMORY);
    assertThat(c.usage().peakMemoryBytes()).isGreaterThanOrEqualTo(64 * MIB);
  }

  @Test
  void onlyAGuardTheChildStartsInSaysItHeldEveryProcess() {
    // What a runner may rely on before it hands a tree's resources (its TMPDIR) to the next tree.
    assertThat(TreeGuard.NONE.holdsEveryProcess()).isFalse();
    assertThat(new SamplerGuard(0, 0).holdsEveryProcess()).isFalse();
    Cgroups v1 = Cgroups.probe(Cgroups.Version.V1, null).cgroups();
    HostRequirements.require(v1 != null, "no usable cgroup v1 here");
    CgroupGuard tracker = new CgroupGuard(v1, TreeLimits.NONE);
    start("setsid sleep 137 & exit 0", tracker).runToCompletion(Long.MAX_VALUE, 2_000_000_000L);
    assertThat(tracker.holdsEveryProcess()).isTrue();
    Cgroups v2 = v2();
    CgroupGuard postSpawn = new CgroupGuard(v2, TreeLimits.NONE);
    start("exit 0", postSpawn).runToCompletion(Long.MAX_VALUE, 2_000_000_000L);
    assertThat(postSpawn.holdsEveryProcess())
        .isEqualTo(Spawner.spawnIntoCgroupAvailability().isAvailable());
    try (SamplerGuard held = new SamplerGuard(0, 0, new CgroupGuard(v1, TreeLimits.NONE))) {
      assertThat(held.holdsEveryProcess()).isTrue();
    }
  }

  private static boolean zombie(int pid) {
    try {
      String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + pid + "/stat"));
      return stat.charAt(stat.lastIndexOf(')') + 2) == 'Z';
    } catch (java.io.IOException gone) {
      return true;
    }
  }
}
