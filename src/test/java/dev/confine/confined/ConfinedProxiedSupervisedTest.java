package dev.confine.confined;

import dev.confine.linux.confinement.ConnectSupervisor;
import dev.confine.testing.HostRequirements;
import org.junit.jupiter.api.Tag;

/**
 * ALLOW_LIST and PROXY rootless (forced as root; as nobody in CI's second run): the children's own
 * TCP connects are refused and the connect supervisor makes the ones to the proxy for them.
 */
@Tag("confinement")
class ConfinedProxiedSupervisedTest extends ProxiedNetworkContract {
  @Override
  ConfinedRunner.Builder builder() {
    return ConfinedRunner.builder(root.toString()).rootless(true);
  }

  @Override
  void requireTheWay() {
    HostRequirements.require(ConnectSupervisor.availability());
  }
}
