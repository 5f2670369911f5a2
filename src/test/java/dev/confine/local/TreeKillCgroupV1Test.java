package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.CapsMechanism;
import dev.confine.ExecResult;
import dev.confine.testing.HostRequirements;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

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

  /**
   * v1 lists only a cgroup's own members: a member that can write the cgroup filesystem (root,
   * unconfined), leaves the session and moves into a cgroup it made inside its tree's (as a JVM
   * running Confine inside an exec does with its own trees) is still killed, and that cgroup goes
   * with the tree instead of keeping the tree's from ever being removed.
   */
  @Test
  void aMemberThatMovedIntoACgroupItMadeInsideTheTreeIsKilledAndTheCgroupRemoved()
      throws Exception {
    HostRequirements.requireRoot();
    ExecResult r =
        runner()
            .exec(
                "sh",
                List.of(
                    "-c",
                    "cg=$(sed -n 's/^[0-9]*:freezer://p' /proc/self/cgroup);"
                        + " d=/sys/fs/cgroup/freezer$cg/inner; mkdir \"$d\" || exit 9;"
                        + " echo \"$d\" > inner;"
                        + " setsid sh -c 'echo $$ > escapee; exec sleep 137 >/dev/null 2>&1' &"
                        + " while [ ! -s escapee ]; do sleep 0.01; done;"
                        + " cat escapee > \"$d/cgroup.procs\" || exit 8; sleep 0.2"),
                null);
    assertThat(r.exitCode()).as(r.stderrText()).isZero();
    int escapee = pidIn("escapee");
    assertGone(escapee);
    assertThat(r.leftoversKilled()).isTrue();
    Path inner = Path.of(Files.readString(root.resolve("inner")).strip());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (Files.exists(inner) && System.nanoTime() < deadline) {
      Thread.sleep(10); // the tree's cgroup is readied for the next tree off the exec's path
    }
    assertThat(inner).as("the cgroup the member made").doesNotExist();
  }
}
