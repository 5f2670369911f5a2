package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Capability.Dimension;
import dev.confine.CapsMechanism;
import dev.confine.testing.HostRequirements;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link TreeKillScenariosTest} with the default runner ({@link CapsMechanism#AUTO}): as root here
 * a v1 freezer cgroup for every exec, capped or not; as nobody (CI runs this class as nobody too)
 * the /proc sampler's tracking.
 */
@Tag("confinement")
class TreeKillAutoTest extends TreeKillScenariosTest {
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

  @Test
  void noCapsStillTracksTheTreeAsAutoDoes() {
    // CapsMechanism.NONE refuses caps; the tree is tracked all the same.
    LocalRunner none = LocalRunner.builder(root.toString()).caps(CapsMechanism.NONE).build();
    assertThat(none.capabilities())
        .filteredOn(c -> c.dimension() == Dimension.TREE_KILL)
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.enforced()).isTrue();
              assertThat(c.detail()).contains(treeKillDetail());
            });
    assertThat(none.enforcement().memoryCap()).isFalse();
  }

  @Override
  protected String blindSpot() {
    return "cannot see a process that left every known session and was orphaned before any"
        + " sample saw it";
  }
}
