package dev.confine.cli;

import dev.confine.local.CapsMechanism;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;

/**
 * The options that choose how the backend enforces caps, shared by {@code exec} and {@code doctor}.
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
              + " /dev/tty, ptys and a private TMPDIR) and, with --net deny, a seccomp filter;"
              + " rootless. Setuid programs lose their privileges inside.")
  boolean confined;

  @Option(
      names = "--write",
      paramLabel = "PATH",
      description = "With --confined: another path CMD may write beneath (repeatable).")
  java.util.List<String> writable = new java.util.ArrayList<>();

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
