package dev.confine.bwrap;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.NetMode;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.host.GoQuote;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SequencedSet;
import java.util.TreeMap;

/**
 * bubblewrap's command line for one call, as pure functions (no I/O): the seed's {@code
 * buildFlags}, {@code filesystemFlags}, {@code netIsolationFlags} and extra-flag check (§10.1,
 * §10.2), and the hardening Confine adds beyond the seed.
 *
 * <p>The runner's argv for the bwrap binary is {@link #commandLine}: the caller's extra flags
 * first, then the policy flags ({@link #buildFlags} and {@link #hardeningFlags}), then the
 * filesystem flags ({@link #filesystemFlags}, {@link #netIsolationFlags} and whatever binds the
 * call adds), then {@code --} and the command. bwrap applies its mount operations in the order
 * given, which is why the order within the filesystem flags matters and is pinned by the tests.
 */
final class BwrapFlags {
  private BwrapFlags() {}

  /**
   * Every bwrap option an extra flag may not be, exactly the seed's set: each can downgrade a
   * dimension the runner promises to enforce (filesystem bounds, the environment allow-list, the
   * network posture, namespace isolation, the work directory, seccomp, capabilities, the session)
   * or smuggle further options past this check ({@code --args} reads options from a file
   * descriptor). Extra flags are for logging and diagnostics, not policy.
   */
  static final SequencedSet<String> REJECTED_EXTRA_FLAGS =
      Collections.unmodifiableSequencedSet(
          new LinkedHashSet<>(
              List.of(
                  // filesystem and mounts
                  "--ro-bind",
                  "--ro-bind-try",
                  "--bind",
                  "--bind-try",
                  "--dev-bind",
                  "--dev-bind-try",
                  "--bind-fd",
                  "--ro-bind-fd",
                  "--remount-ro",
                  "--overlay-src",
                  "--overlay",
                  "--tmp-overlay",
                  "--ro-overlay",
                  "--proc",
                  "--dev",
                  "--tmpfs",
                  "--mqueue",
                  "--dir",
                  "--file",
                  "--bind-data",
                  "--ro-bind-data",
                  "--symlink",
                  "--chmod",
                  "--perms",
                  // environment
                  "--clearenv",
                  "--setenv",
                  "--unsetenv",
                  // network and namespaces
                  "--unshare-all",
                  "--share-net",
                  "--unshare-user",
                  "--unshare-user-try",
                  "--unshare-ipc",
                  "--unshare-pid",
                  "--unshare-net",
                  "--unshare-uts",
                  "--unshare-cgroup",
                  "--unshare-cgroup-try",
                  "--disable-userns",
                  "--assert-userns-disabled",
                  "--userns",
                  "--userns2",
                  "--pidns",
                  // work directory, identity, seccomp, capabilities, session
                  "--chdir",
                  "--uid",
                  "--gid",
                  "--hostname",
                  "--seccomp",
                  "--add-seccomp-fd",
                  "--cap-add",
                  "--cap-drop",
                  "--new-session",
                  // options smuggled from a file descriptor
                  "--args")));

  /**
   * The first of {@code flags} whose name (the part before the first {@code =}) is a {@linkplain
   * #REJECTED_EXTRA_FLAGS rejected flag}, whole as given; empty when every flag may be passed. Only
   * the flag tokens themselves are looked at: a value after {@code =} is never judged, and a token
   * that is not a flag name (a value given as the next token) passes unless it spells one.
   */
  static Optional<String> rejectedExtraFlag(List<String> flags) {
    for (String raw : flags) {
      int eq = raw.indexOf('=');
      String name = eq < 0 ? raw : raw.substring(0, eq);
      if (REJECTED_EXTRA_FLAGS.contains(name)) {
        return Optional.of(raw);
      }
    }
    return Optional.empty();
  }

  /**
   * Checks the extra flags a runner is built with (§10.1 step 1).
   *
   * @throws SandboxException VALIDATION {@code bwrap: extra flag "X" can weaken sandbox
   *     enforcement; policy flags are owned by ExecOptions} for the first {@linkplain
   *     #rejectedExtraFlag rejected} flag X (quoted as Go's {@code %q}); NullPointerException for a
   *     null flag
   */
  static void validateExtraFlags(List<String> flags) {
    Optional<String> rejected = rejectedExtraFlag(flags);
    if (rejected.isPresent()) {
      throw SandboxException.of(
          Kind.VALIDATION,
          "bwrap: extra flag "
              + GoQuote.of(rejected.get())
              + " can weaken sandbox enforcement; policy flags are owned by ExecOptions");
    }
  }

  /**
   * The policy flags of one call (§10.2), before the filesystem flags: {@code --die-with-parent}
   * (killing bwrap, on a timeout or a cap, kills the whole sandboxed tree: bwrap has no deadline of
   * its own) and {@code --unshare-pid} (a private PID namespace: the command sees no host process),
   * always; {@code --chdir WORKDIR} when the work directory is not empty (the runner passes the one
   * it resolved); the environment ({@link #envFlags}); the network ({@link #netFlags}).
   *
   * @param hostEnv the host environment the policy filters (the runner passes its snapshot, {@code
   *     HostEnvironment.ofThisProcess()}), so that this stays pure
   * @throws SandboxException NOT_AVAILABLE for a network mode bwrap has no flag for
   */
  static List<String> buildFlags(ExecOptions opts, Map<String, String> hostEnv) {
    List<String> flags = new ArrayList<>();
    flags.add("--die-with-parent");
    flags.add("--unshare-pid");
    if (!opts.workDir().isEmpty()) {
      flags.add("--chdir");
      flags.add(opts.workDir());
    }
    flags.addAll(envFlags(opts.env(), hostEnv));
    flags.addAll(netFlags(opts.net().mode()));
    return List.copyOf(flags);
  }

  /**
   * The environment as bwrap sets it: {@code --clearenv} first (bwrap otherwise hands its own, the
   * host's, environment to the child, which would leak every variable the allow-list keeps out),
   * then {@code --setenv NAME VALUE} for each variable of the child's environment as {@link
   * EnvPolicy#apply} makes it for every runner (allow null: every host variable; allow non-empty:
   * only those named; allow empty: none; then the injected ones, replacing a host value of the same
   * name). With {@code allow} empty and nothing injected the result is exactly {@code --clearenv}.
   *
   * <p>The triples are sorted by name, so that a call's command line is the same every time (the
   * seed emits them in Go's map order, which is random; bwrap's result does not depend on it, as
   * each name is set once). A host entry with an empty name is left out, as the seed's does (no
   * {@code setenv} can set it).
   */
  static List<String> envFlags(EnvPolicy env, Map<String, String> hostEnv) {
    List<String> hostEntries = new ArrayList<>(hostEnv.size());
    hostEnv.forEach((name, value) -> hostEntries.add(name + "=" + value));
    TreeMap<String, String> sorted = new TreeMap<>();
    for (String entry : env.apply(hostEntries)) {
      int eq = entry.indexOf('=');
      if (eq > 0) {
        sorted.put(entry.substring(0, eq), entry.substring(eq + 1));
      }
    }
    List<String> flags = new ArrayList<>(1 + 3 * sorted.size());
    flags.add("--clearenv");
    sorted.forEach(
        (name, value) -> {
          flags.add("--setenv");
          flags.add(name);
          flags.add(value);
        });
    return flags;
  }

  /**
   * The network namespace: {@link NetMode#DEFAULT} shares the host's ({@code --share-net});
   * DENY_ALL, ALLOW_LIST and PROXY get a private one with only loopback, up ({@code --unshare-net};
   * the proxied modes differ only in the command and the binds the runner adds).
   *
   * @throws SandboxException NOT_AVAILABLE {@code bwrap: unknown net mode N} for a mode this
   *     backend has no flags for (none today: the seed's check, kept for modes added later)
   */
  static List<String> netFlags(NetMode mode) {
    switch (mode) {
      case DEFAULT:
        return List.of("--share-net");
      case DENY_ALL:
      case ALLOW_LIST:
      case PROXY:
        return List.of("--unshare-net");
      default:
        throw SandboxException.of(Kind.NOT_AVAILABLE, "bwrap: unknown net mode " + mode.code());
    }
  }

  /**
   * The mount boundary around {@code root} (§10.2), in this order: the host's root read-only
   * ({@code --ro-bind / /}: toolchains stay usable); a private writable tmpfs on {@code /tmp};
   * {@code root} read-write at its own path; each writable path read-write at its own path (an
   * empty one, or the root again, is skipped); a fresh procfs on {@code /proc} and a minimal {@code
   * /dev}.
   *
   * <p>The /tmp tmpfs comes before the binds on purpose: bwrap mounts in order, and a root (or a
   * writable path) under /tmp, common in tests and CI, would be hidden by a tmpfs mounted after it;
   * bound after, it shows through the otherwise private /tmp. /proc and /dev come after the binds
   * so that no bind can cover them.
   *
   * @param root the runner's root, resolved ({@link BwrapSettings#root()})
   * @param writable the writable paths beyond it, resolved ({@link BwrapSettings#writablePaths()})
   */
  static List<String> filesystemFlags(String root, List<String> writable) {
    List<String> flags = new ArrayList<>(List.of("--ro-bind", "/", "/", "--tmpfs", "/tmp"));
    flags.addAll(List.of("--bind", root, root));
    for (String path : writable) {
      if (path.isEmpty() || path.equals(root)) {
        continue;
      }
      flags.addAll(List.of("--bind", path, path));
    }
    flags.addAll(List.of("--proc", "/proc", "--dev", "/dev"));
    return List.copyOf(flags);
  }

  /**
   * The isolation the network-isolated modes need beyond {@code --unshare-net}: DENY_ALL,
   * ALLOW_LIST and PROXY get a private tmpfs on {@code /run}, which hides the host's unix sockets
   * there (docker.sock, D-Bus, systemd), which a network namespace does not confine. DEFAULT keeps
   * the host's /run, where a local resolver's files (systemd-resolved's stub resolv.conf) live; the
   * isolated modes have no route to a resolver anyway.
   */
  static List<String> netIsolationFlags(NetMode mode) {
    return switch (mode) {
      case DENY_ALL, ALLOW_LIST, PROXY -> List.of("--tmpfs", "/run");
      case DEFAULT -> List.of();
    };
  }

  /**
   * Hardening beyond the seed (issue 20), for every call, with the policy flags:
   *
   * <ul>
   *   <li>{@code --new-session}: the command runs in a session of its own (setsid), with no
   *       controlling terminal, so it cannot push input into the caller's terminal with the TIOCSTI
   *       ioctl (which kernels allow unless {@code dev.tty.legacy_tiocsti} is 0; it is 1 on the
   *       development host). The price, checked under a pty: the command's stdio is still the
   *       terminal, but it is not its controlling terminal ({@code /proc/self/stat} tty_nr 0,
   *       opening {@code /dev/tty} fails with ENXIO), so a shell has no job control. A runner's pty
   *       session, whose terminal is the child's own, may want the seccomp filter against TIOCSTI
   *       instead.
   *   <li>{@code --cap-drop ALL}: the command holds no capability. This matters as root: bwrap run
   *       by root without a user namespace leaves the child every capability of root (checked:
   *       without it, a child remounted a read-only bind read-write and wrote through it; with it,
   *       {@code mount} fails with permission denied, and CapPrm, CapEff and CapAmb are 0). bwrap
   *       also sets no_new_privs, so an exec (even of a setuid program, even as uid 0) cannot gain
   *       any back; the bounding set stays full as root. Without root, bwrap runs the child in a
   *       user namespace without capabilities anyway (bounding set 0), and the flag changes
   *       nothing.
   * </ul>
   *
   * Both are in {@link #REJECTED_EXTRA_FLAGS}: no extra flag can undo them.
   */
  static List<String> hardeningFlags() {
    return List.of("--new-session", "--cap-drop", "ALL");
  }

  /**
   * The bwrap binary's arguments (§10.3 step 9): {@code extraFlags}, then {@code policyFlags}, then
   * {@code filesystemFlags}, then {@code --}, then {@code command} (the program and its arguments).
   * Everything after {@code --} is the command's, never read as a bwrap option.
   */
  static List<String> commandLine(
      List<String> extraFlags,
      List<String> policyFlags,
      List<String> filesystemFlags,
      List<String> command) {
    List<String> argv =
        new ArrayList<>(
            extraFlags.size() + policyFlags.size() + filesystemFlags.size() + 1 + command.size());
    argv.addAll(extraFlags);
    argv.addAll(policyFlags);
    argv.addAll(filesystemFlags);
    argv.add("--");
    argv.addAll(command);
    return List.copyOf(argv);
  }
}
