package dev.confine.cli;

import dev.confine.CapsMechanism;
import dev.confine.bwrap.BwrapRunner;
import dev.confine.confined.ConfinedRunner;
import dev.confine.linux.sys.Users;
import java.util.Locale;
import java.util.Optional;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;

/**
 * The options that choose the backend and how it enforces caps and confinement, shared by {@code
 * exec}, {@code shell} and {@code doctor}.
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
          "Confine CMD with Landlock (writes only beneath the root, the --write paths, the null"
              + " and random devices, its own terminal and a private TMPDIR; no other terminal or"
              + " device), no capabilities, a seccomp filter (no calls on other processes) and,"
              + " with --net deny, a private network namespace as root or no sockets but unix"
              + " ones without. Setuid programs lose their privileges inside.")
  boolean confined;

  @Option(
      names = "--bwrap",
      description =
          "Run CMD inside bubblewrap (bwrap): the host read-only, the root and the --write paths"
              + " writable, a private /tmp, a private PID namespace, no capabilities, a new"
              + " session; with --net deny a private network namespace (only loopback) and /run.")
  boolean bwrap;

  @Option(
      names = "--bwrap-flag",
      paramLabel = "FLAG",
      description =
          "With --bwrap: a flag passed to bwrap before its own (repeatable); a flag that could"
              + " weaken the policy (--bind, --share-net, --cap-add, ...) is refused.")
  java.util.List<String> bwrapFlags = new java.util.ArrayList<>();

  @Option(
      names = "--write",
      paramLabel = "PATH",
      description = "With --confined or --bwrap: another path CMD may write beneath (repeatable).")
  java.util.List<String> writable = new java.util.ArrayList<>();

  @Option(
      names = "--rootless",
      description =
          "With --confined: use only the rootless mechanisms (Landlock, seccomp) even as root; by"
              + " default root gets --net deny as a private network namespace (only loopback).")
  boolean rootless;

  @Option(
      names = "--user",
      paramLabel = "USER[:GROUP]",
      converter = UserConverter.class,
      description =
          "With --confined, as root: run CMD as this user (a name or a number) and group (default:"
              + " the user's own), while Confine stays root.")
  Users.Ids user;

  @Option(
      names = "--read-only-host",
      description =
          "With --confined: every mount read-only for CMD except the root, the --write paths, the"
              + " devices and TMPDIR (a private mount namespace; needs root).")
  boolean readOnlyHost;

  @Option(
      names = "--audit",
      paramLabel = "FILE",
      description =
          "With --confined and --net allow-list or proxy: append one JSON line per egress proxy"
              + " decision and per closed connection to FILE ('-': stderr).")
  String audit;

  /**
   * Rejects the confinement options without {@code --confined} (or {@code --bwrap}, for {@code
   * --write}), both backends at once, {@code --bwrap-flag} without {@code --bwrap}, and the
   * contradiction of {@code --rootless} with {@code --read-only-host}.
   *
   * @throws ParameterException (a usage error of {@code spec}) naming the option
   */
  void validate(CommandSpec spec) {
    if (confined && bwrap) {
      throw new ParameterException(
          spec.commandLine(), "--confined and --bwrap are two backends: choose one");
    }
    if (!bwrap && !bwrapFlags.isEmpty()) {
      throw new ParameterException(spec.commandLine(), "--bwrap-flag needs --bwrap");
    }
    if (!confined && !bwrap && !writable.isEmpty()) {
      throw new ParameterException(spec.commandLine(), "--write needs --confined or --bwrap");
    }
    String needsConfined =
        confined
            ? null
            : rootless
                ? "--rootless"
                : readOnlyHost
                    ? "--read-only-host"
                    : user != null ? "--user" : audit != null ? "--audit" : null;
    if (needsConfined != null) {
      throw new ParameterException(spec.commandLine(), needsConfined + " needs --confined");
    }
    if (rootless && readOnlyHost) {
      throw new ParameterException(
          spec.commandLine(),
          "--read-only-host needs a private mount namespace, which --rootless rules out");
    }
  }

  /** The bubblewrap runner these options describe (with {@code --bwrap}). */
  BwrapRunner.Builder bwrapBuilder(String root) {
    return BwrapRunner.builder(root)
        .writablePaths(writable.toArray(String[]::new))
        .extraFlags(bwrapFlags.toArray(String[]::new))
        .caps(caps)
        .cgroupParent(cgroupParent);
  }

  /** Where {@code --audit -} writes: the command's stderr. */
  java.io.PrintStream auditStderr = System.err;

  /**
   * The confined runner these options describe (with {@code --confined}).
   *
   * @throws dev.confine.SandboxException VALIDATION when the audit file cannot be opened
   */
  ConfinedRunner.Builder confinedBuilder(String root) {
    ConfinedRunner.Builder b =
        ConfinedRunner.builder(root)
            .writablePaths(writable.toArray(String[]::new))
            .rootless(rootless)
            .readOnlyHost(readOnlyHost)
            .caps(caps)
            .cgroupParent(cgroupParent);
    if (audit != null) {
      try {
        b.proxyAudit(
            new AuditLines(
                audit.equals("-") ? auditStderr : AuditLines.append(java.nio.file.Path.of(audit))));
      } catch (java.io.IOException | java.nio.file.InvalidPathException e) {
        throw dev.confine.SandboxException.of(
            dev.confine.SandboxException.Kind.VALIDATION,
            "cannot open --audit " + JsonString.quote(audit) + ": " + e.getMessage());
      }
    }
    return user == null ? b : b.runAs(user.uid(), user.gid());
  }

  /**
   * Parses {@code USER[:GROUP]}: names are looked up as the system does, numbers are taken as they
   * are; without a group, the user's own (a number with no account needs one).
   */
  static final class UserConverter implements ITypeConverter<Users.Ids> {
    @Override
    public Users.Ids convert(String value) {
      int colon = value.indexOf(':');
      String u = colon < 0 ? value : value.substring(0, colon);
      String g = colon < 0 ? null : value.substring(colon + 1);
      if (u.isEmpty() || (g != null && g.isEmpty())) {
        throw new TypeConversionException(
            "--user " + JsonString.quote(value) + " is not of the form USER or USER:GROUP");
      }
      Optional<Users.Ids> account = isNumber(u) ? Users.user(parse(u)) : Users.user(u);
      if (account.isEmpty() && !isNumber(u)) {
        throw new TypeConversionException("no user named " + JsonString.quote(u));
      }
      int uid = isNumber(u) ? parse(u) : account.get().uid();
      int gid;
      if (g == null) {
        if (account.isEmpty()) {
          throw new TypeConversionException(
              "uid " + u + " has no account to take a group from; give one: --user " + u + ":GID");
        }
        gid = account.get().gid();
      } else if (isNumber(g)) {
        gid = parse(g);
      } else {
        gid =
            Users.group(g)
                .orElseThrow(
                    () -> new TypeConversionException("no group named " + JsonString.quote(g)));
      }
      return new Users.Ids(uid, gid);
    }

    private static boolean isNumber(String s) {
      return s.chars().allMatch(Character::isDigit);
    }

    private static int parse(String s) {
      try {
        return Integer.parseInt(s);
      } catch (NumberFormatException e) {
        throw new TypeConversionException(s + " is not an id (0 to " + Integer.MAX_VALUE + ")");
      }
    }
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
            throw new TypeConversionException(
                "unknown caps mechanism \""
                    + value
                    + "\" (use auto, cgroup-v1, cgroup-v2, sampler or none)");
      };
    }
  }
}
