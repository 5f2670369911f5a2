package dev.confine.local;

import dev.confine.CapsMechanism;
import org.junit.jupiter.api.Tag;

/**
 * {@link TreeKillScenariosTest} under the /proc sampler, as root and (in CI) as nobody: members by
 * ancestry and by the sessions of members, a last look before the kill, stop then kill. A process
 * orphaned outside every known session before any look is out of its sight (not raceFree).
 */
@Tag("confinement")
class TreeKillSamplerTest extends TreeKillScenariosTest {
  @Override
  protected CapsMechanism mechanism() {
    return CapsMechanism.PROC_SAMPLER;
  }

  @Override
  protected String treeKillDetail() {
    return "/proc sampler";
  }

  @Override
  protected String linger() {
    // A sample comes every few milliseconds; a loaded machine can starve the sampler for longer.
    return "; sleep 1";
  }

  @Override
  protected boolean raceFree() {
    return false;
  }

  @Override
  protected String blindSpot() {
    return "cannot see a process that left every known session and was orphaned before any"
        + " sample saw it";
  }
}
