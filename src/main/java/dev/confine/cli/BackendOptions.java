package dev.confine.cli;

import dev.confine.SandboxException;
import dev.confine.confined.ConfinedRunner;
import dev.confine.local.CapsMechanism;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;

/**
 * The options that choose the backend and how it enforces caps and confinement, shared by {@code
 * exec} and {@code doctor}.
 */
final class BackendOptions {
  @Option(
      names = "--caps",
      paramLabel = "MECHANISM",
      converter = CapsConverter.class,
      description =
          "How resource caps are enforced: auto (cgroups, else the /proc sampler), cgroup-v1,"
              + " cgroup-v2, sampler, none (default: auto).")
  CapsMechanism caps = CapsMechanism.AUTO;

  @Option(
      names = "--cgroup-parent",
      paramLabel = "DIR",
      description =
          "A delegated cgroup v2 directory to create per-command cgroups in (default: this"
              + " process's own cgroup).")
  String cgroupParent;

  @Option(
      names = "--confined",
      description =
          "Confine CMD with Landlock (writes only beneath the root, the --write paths, /dev/null,"
              + " /dev/tty, ptys and a private TMPDIR) and, with --net deny, a private network"
              + " namespace as root or a seccomp filter without. Setuid programs lose their"
              + " privileges inside.")
  boolean confined;

  @Option(
      names = "--write",
      paramLabel = "PATH",
      description = "With --confined: another path CMD may write beneath (repeatable).")
  java.util.List<String> writable = new java.util.ArrayList<>();

  @Option(
      names = "--rootless",
      description =
          "With --confined: use only the rootless mechanisms (Landlock, seccomp) even as root; by"
              + " default root gets --net deny as a private network namespace (only loopback).")
  boolean rootless;

  @Option(
      names = "--read-only-host",
      description =
          "With --confined: every mount read-only for CMD except the root, the --write paths, the"
              + " devices and TMPDIR (a private mount namespace; needs root).")
  boolean readOnlyHost;

  /**
   * Rejects the confinement options without {@code --confined}, and the contradiction of {@code
   * --rootless} with {@code --read-only-host}.
   *
   * @throws SandboxException VALIDATION naming the option
   */
  void validate() {
    String needsConfined =
        confined
            ? null
            : !writable.isEmpty()
                ? "--write"
                : rootless ? "--rootless" : readOnlyHost ? "--read-only-host" : null;
    if (needsConfined != null) {
      throw new SandboxException(
          SandboxException.Kind.VALIDATION, "confine: " + needsConfined + " needs --confined");
    }
  }

  /** The confined runner these options describe (with {@code --confined}). */
  ConfinedRunner.Builder confinedBuilder(String root) {
    return ConfinedRunner.builder(root)
        .writablePaths(writable.toArray(String[]::new))
        .rootless(rootless)
        .readOnlyHost(readOnlyHost);
  }

  /** Parses auto, cgroup-v1, cgroup-v2, sampler, none. */
  static final class CapsConverter implements ITypeConverter<CapsMechanism> {
    @Override
    public CapsMechanism convert(String value) {
      return switch (value.toLowerCase(Locale.ROOT)) {
        case "auto" -> CapsMechanism.AUTO;
        case "cgroup-v1" -> CapsMechanism.CGROUP_V1;
        case "cgroup-v2" -> CapsMechanism.CGROUP_V2;
        case "sampler" -> CapsMechanism.PROC_SAMPLER;
        case "none" -> CapsMechanism.NONE;
        default ->
            throw new IllegalArgumentException(
                "unknown caps mechanism \""
                    + value
                    + "\" (use auto, cgroup-v1, cgroup-v2, sampler or none)");
      };
    }
  }
}
