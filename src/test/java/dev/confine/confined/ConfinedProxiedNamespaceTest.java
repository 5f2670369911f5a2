package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecResult;
import dev.confine.linux.confinement.ThreadNamespaces;
import dev.confine.testing.HostRequirements;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * ALLOW_LIST and PROXY as root: the children's private network namespace has only loopback and the
 * egress proxy's listener in it.
 */
@Tag("confinement")
@Tag("root")
class ConfinedProxiedNamespaceTest extends ProxiedNetworkContract {
  @Override
  ConfinedRunner.Builder builder() {
    return ConfinedRunner.builder(root.toString());
  }

  @Override
  void requireTheWay() {
    HostRequirements.require(ThreadNamespaces.networkAvailability());
  }

  @Test
  void theChildrenSeeOnlyLoopback() {
    ExecResult r = sh("cat /proc/net/dev", allowOrigin());
    assertThat(r.stdoutText()).contains("lo:").doesNotContain("eth");
  }
}
