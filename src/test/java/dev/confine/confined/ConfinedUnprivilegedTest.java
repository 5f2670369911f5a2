package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.confinement.ConfinementThreads.Network;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.linux.confinement.ThreadNamespaces;
import dev.confine.testing.HostRequirements;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Without root: no namespaces, the reasons reported, {@code DENY_ALL} by seccomp and a read-only
 * host NOT_AVAILABLE. CI runs it as an unprivileged user; the run as root excludes it.
 */
@Tag("confinement")
@Tag("unprivileged")
class ConfinedUnprivilegedTest {
  @TempDir Path root;

  @BeforeEach
  void needsNoRoot() {
    HostRequirements.require(!HostRequirements.isRoot(), "must run without root");
    HostRequirements.require(Landlock.availability());
    HostRequirements.require(SeccompFilter.availability());
  }

  @Test
  void runningChildrenAsAnotherUserIsNotAvailable() {
    ConfinedRunner r = ConfinedRunner.builder(root.toString()).runAs(12345, 12345).build();
    assertThatThrownBy(
            () ->
                r.exec(
                    "true",
                    List.of(),
                    ExecOptions.builder().timeout(Duration.ofSeconds(30)).build()))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE))
        .hasMessageContaining("needs root");
    assertThat(r.capabilities())
        .filteredOn(c -> c.dimension() == Dimension.USER)
        .singleElement()
        .satisfies(c -> assertThat(c.enforced()).isFalse());
  }

  @Test
  void theNamespaceProbeSaysRootIsNeeded() {
    assertThat(ThreadNamespaces.networkAvailability().unavailabilityCause())
        .hasValueSatisfying(
            why -> assertThat(why).contains("needs root").contains("Operation not permitted"));
    assertThat(ThreadNamespaces.mountAvailability().unavailabilityCause())
        .hasValueSatisfying(why -> assertThat(why).contains("needs root"));
  }

  @Test
  void denyAllFallsBackToSeccompAndSaysWhy() {
    ConfinedRunner runner = ConfinedRunner.builder(root.toString()).build();
    assertThat(runner.denyAllNetwork()).isEqualTo(Network.SECCOMP);
    HostRequirements.requireProgram("python3");
    ExecResult r =
        runner.exec(
            "python3",
            List.of("-c", "import socket; socket.socket(socket.AF_INET)"),
            ExecOptions.builder().timeout(Duration.ofSeconds(30)).net(NetPolicy.denyAll()).build());
    assertThat(r.exitCode()).isNotZero();
    assertThat(r.stderrText()).contains("PermissionError");
    assertThat(runner.capabilities())
        .filteredOn(c -> c.dimension() == Dimension.NET_DENY_ALL)
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.enforced()).isTrue();
              assertThat(c.detail()).startsWith("seccomp:").contains("needs root");
            });
  }

  @Test
  void aReadOnlyHostIsNotAvailableWithTheReason() {
    ConfinedRunner runner = ConfinedRunner.builder(root.toString()).readOnlyHost(true).build();
    assertThatThrownBy(() -> runner.exec("true", List.of(), ExecOptions.defaults()))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE))
        .hasMessageContaining("read-only host needs a private mount namespace")
        .hasMessageContaining("needs root");
    List<Capability> rows = runner.capabilities();
    assertThat(rows)
        .filteredOn(c -> c.dimension() == Dimension.READ_ONLY_HOST)
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.enforced()).isFalse();
              assertThat(c.detail()).contains("needs root");
            });
  }
}
