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
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rootless(true)}: no namespaces even as root. The children share the host's network
 * namespace (they see its interfaces) and the seccomp filter refuses their sockets, loopback
 * included. Meaningful with and without root: CI runs it in both runs.
 */
@Tag("confinement")
class ConfinedRootlessTest {
  @TempDir Path root;

  private static final ExecOptions DENY =
      ExecOptions.builder().timeout(Duration.ofSeconds(30)).net(NetPolicy.denyAll()).build();

  @BeforeEach
  void needsLandlockAndSeccomp() {
    HostRequirements.require(Landlock.availability());
    HostRequirements.require(SeccompFilter.availability());
  }

  private ConfinedRunner rootless() {
    return ConfinedRunner.builder(root.toString()).rootless(true).build();
  }

  private static List<String> interfaces(String procNetDev) {
    return procNetDev
        .lines()
        .skip(2)
        .map(l -> l.substring(0, l.indexOf(':')).trim())
        .sorted()
        .toList();
  }

  @Test
  void denyAllKeepsTheHostsNamespaceAndRefusesSockets() throws IOException {
    assertThat(rootless().denyAllNetwork()).isEqualTo(Network.SECCOMP);
    ExecResult dev = rootless().exec("cat", List.of("/proc/net/dev"), DENY);
    assertThat(dev.exitCode()).as(dev.stderrText()).isZero();
    assertThat(interfaces(dev.stdoutText()))
        .isEqualTo(interfaces(Files.readString(Path.of("/proc/thread-self/net/dev"))));
    ExecResult ns = rootless().exec("readlink", List.of("/proc/self/ns/net"), DENY);
    assertThat(ns.stdoutText().strip())
        .isEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString());

    HostRequirements.requireProgram("python3");
    String loopback =
        "import socket\n"
            + "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1); print('listening')\n";
    ExecResult server = rootless().exec("python3", List.of("-c", loopback), DENY);
    assertThat(server.exitCode()).isNotZero();
    assertThat(server.stdoutText()).isEmpty();
    assertThat(server.stderrText()).contains("PermissionError");
  }

  @Test
  void capabilitiesSayWhyNoNamespaceIsUsed() {
    List<Capability> rows = rootless().capabilities();
    assertThat(rows)
        .filteredOn(r -> r.dimension() == Dimension.NET_DENY_ALL)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.enforced()).isTrue();
              assertThat(r.detail()).startsWith("seccomp:").endsWith("(rootless forced)");
            });
    assertThat(rows)
        .filteredOn(r -> r.dimension() == Dimension.READ_ONLY_HOST)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.enforced()).isFalse();
              assertThat(r.detail()).contains("rootless forced");
            });
    assertThat(rows)
        .filteredOn(r -> r.dimension() == Dimension.FILESYSTEM_BOUNDS)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.enforced()).isTrue();
              assertThat(r.detail()).startsWith("Landlock ABI " + Landlock.abi() + ":");
            });
    assertThat(rows)
        .filteredOn(r -> r.dimension() == Dimension.SIGNAL_SCOPING)
        .singleElement()
        .satisfies(r -> assertThat(r.enforced()).isEqualTo(Landlock.abi() >= 6));
    assertThat(rows)
        .filteredOn(r -> r.dimension() == Dimension.NO_NEW_PRIVS)
        .singleElement()
        .satisfies(r -> assertThat(r.detail()).contains("setuid"));
    assertThat(rows)
        .filteredOn(
            r ->
                List.of(Dimension.MEMORY, Dimension.CPU, Dimension.TREE_KILL)
                    .contains(r.dimension()))
        .hasSize(3)
        .allSatisfy(r -> assertThat(r.enforced()).isTrue());
  }

  @Test
  void rootlessAndAReadOnlyHostContradictEachOther() {
    assertThatThrownBy(
            () -> ConfinedRunner.builder(root.toString()).rootless(true).readOnlyHost(true).build())
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION))
        .hasMessageContaining("mount namespace");
  }
}
