package dev.confine.confined;

import dev.confine.CapsMechanism;
import dev.confine.Runner;
import dev.confine.local.TreeKillScenariosTest;
import dev.confine.testing.HostRequirements;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/**
 * {@link TreeKillScenariosTest} under the confined runner (rootless, so that the runs as root and
 * as nobody take the same confinement): as root a freezer cgroup the confinement thread places the
 * child in, race-free; as nobody the /proc sampler's tracking.
 */
@Tag("confinement")
class ConfinedTreeKillTest extends TreeKillScenariosTest {
  @Override
  protected Runner build(Path root) {
    return ConfinedRunner.builder(root.toString()).rootless(true).build();
  }

  @Override
  protected CapsMechanism mechanism() {
    return CapsMechanism.AUTO;
  }

  @Override
  protected String treeKillDetail() {
    return HostRequirements.isRoot() ? "cgroup v1 freezer" : "/proc sampler";
  }

  @Override
  protected boolean raceFree() {
    return HostRequirements.isRoot();
  }

  @Override
  protected String blindSpot() {
    return "cannot see a process that left every known session and was orphaned before any"
        + " sample saw it";
  }
}
