package dev.confine.confined;

import dev.confine.ExecOptions;
import dev.confine.NetPolicy;
import dev.confine.testing.HostRequirements;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Every confined mode this host can run, for tests that attack all of them alike: rootless with and
 * without the network, and as root the network namespace, the read-only host and another user.
 */
final class ConfinedModes {
  private ConfinedModes() {}

  /**
   * The Python the children run: the system's, which every user can execute (a python3 found first
   * on root's PATH may live in root's home).
   */
  static final String PYTHON =
      Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3";

  /** The uid and gid of user nobody, which the run-as mode switches to. */
  static final int NOBODY = 65534;

  /**
   * One mode.
   *
   * @param name how tests name it
   * @param builder the runner for a root directory
   * @param options the options of its execs (the network policy)
   */
  record Mode(String name, Function<Path, ConfinedRunner.Builder> builder, ExecOptions options) {
    ConfinedRunner runner(Path root) {
      return builder.apply(root).build();
    }

    @Override
    public String toString() {
      return name;
    }
  }

  private static ExecOptions options(boolean denyAll) {
    ExecOptions.Builder b = ExecOptions.builder().timeout(Duration.ofSeconds(60));
    return (denyAll ? b.net(NetPolicy.denyAll()) : b).build();
  }

  /** Every mode, whether this host can run it or not. */
  static final List<Mode> ALL =
      List.of(
          new Mode(
              "rootless",
              root -> ConfinedRunner.builder(root.toString()).rootless(true),
              options(false)),
          new Mode(
              "rootless-deny",
              root -> ConfinedRunner.builder(root.toString()).rootless(true),
              options(true)),
          new Mode(
              "namespace-deny", root -> ConfinedRunner.builder(root.toString()), options(true)),
          new Mode(
              "read-only-host",
              root -> ConfinedRunner.builder(root.toString()).readOnlyHost(true),
              options(false)),
          new Mode(
              "run-as-nobody",
              root -> ConfinedRunner.builder(root.toString()).runAs(NOBODY, NOBODY),
              options(true)));

  /** The modes this host runs: the rootless ones, and as root all of them. */
  static List<Mode> available() {
    List<Mode> out = new ArrayList<>();
    for (Mode m : ALL) {
      if (HostRequirements.isRoot() || m.name().startsWith("rootless")) {
        out.add(m);
      }
    }
    return out;
  }

  /** The mode named {@code name}. */
  static Mode named(String name) {
    return ALL.stream().filter(m -> m.name().equals(name)).findFirst().orElseThrow();
  }
}
