package dev.confine.confined;

import static dev.confine.confined.ConfinedRunner.DEVICES;
import static dev.confine.confined.ConfinedRunner.confinement;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.linux.Caps;
import dev.confine.linux.Engine;
import dev.confine.linux.confinement.ConfinementThreads.Network;
import dev.confine.linux.confinement.ConnectSupervisor;
import dev.confine.linux.confinement.Credentials;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.linux.confinement.ThreadNamespaces;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The capability report of one {@link ConfinedRunner} ({@link ConfinedRunner#capabilities()}):
 * every dimension, whether it holds for the runner's settings on this host, and by which mechanism
 * or why not.
 */
final class ConfinedCapabilities {
  private final ConfinedRunner runner;
  private final Credentials.User user; // null: this JVM's user
  private final Caps caps;

  ConfinedCapabilities(ConfinedRunner runner, Credentials.User user, Caps caps) {
    this.runner = runner;
    this.user = user;
    this.caps = caps;
  }

  /** The rows, one per dimension, always in the same order. */
  List<Capability> rows() {
    List<Capability> rows = new ArrayList<>();
    String engine = Engine.availability().unavailabilityCause().orElse(null);
    if (engine != null) {
      for (Dimension d : Dimension.values()) {
        rows.add(new Capability(d, false, engine));
      }
      return rows;
    }
    String none = confinement().unavailabilityCause().orElse(null);
    int abi = Landlock.abi();
    rows.add(
        new Capability(
            Dimension.SPAWN,
            none == null,
            none == null
                ? "posix_spawn through FFM on a dedicated confinement thread; pidfd + epoll reaping"
                : "nothing runs: " + none));
    rows.add(new Capability(Dimension.ENV, true, "explicit environment"));
    rows.add(
        none != null
            ? new Capability(Dimension.FILESYSTEM_BOUNDS, false, none)
            : new Capability(
                Dimension.FILESYSTEM_BOUNDS,
                true,
                "Landlock ABI "
                    + abi
                    + ": writes only beneath the root ("
                    + runner.root()
                    + ")"
                    + (runner.writablePaths().isEmpty()
                        ? ""
                        : ", the writable paths (resolved: "
                            + String.join(", ", runner.writablePaths())
                            + ")")
                    + ", "
                    + String.join(", ", DEVICES)
                    + ", a session's own pty and a private TMPDIR"
                    + (abi >= 2 ? "; links and renames across the bound refused" : "")
                    + (abi >= 3 ? "; truncation" : "; truncation NOT covered (needs ABI 3)")
                    + (abi >= 5 ? "; device ioctls" : "; device ioctls NOT covered (needs ABI 5)")
                    + "; reads everywhere but the device directories (/dev and every devtmpfs or"
                    + " devpts mount: only null, zero, full, random, urandom, tty, ptmx, shm and"
                    + " mqueue there); execution open; metadata (chmod, chown, xattrs, timestamps)"
                    + " NOT covered outside a read-only host"));
    rows.add(
        none != null
            ? new Capability(Dimension.TERMINALS, false, none)
            : new Capability(
                Dimension.TERMINALS,
                true,
                "a session's children open only its own pty and /dev/tty (their controlling"
                    + " terminal); no other terminal, console or device of the device directories"
                    + " can be read or written (Landlock); ioctl TIOCSTI and TIOCLINUX refused on"
                    + " every fd (seccomp); programs that make ptys of their own (script, tmux,"
                    + " expect) cannot open them, since Landlock cannot tell those from other"
                    + " terminals; device nodes outside the device directories (in a chroot's dev"
                    + " directory, say) keep their own permissions"));
    rows.add(capabilitiesRow(none));
    rows.add(userRow(none));
    rows.add(
        held(
            Dimension.OTHER_PROCESSES,
            none,
            "seccomp refuses (EPERM) prlimit64, sched_setaffinity, sched_setscheduler,"
                + " sched_setparam, sched_setattr, migrate_pages and move_pages for any pid but"
                + " 0 (the caller: a program that names its own pid is refused too),"
                + " setpriority and ioprio_set for anything but the caller's own process or"
                + " process group, and kcmp; Landlock refuses ptrace and reading another"
                + " process's memory, environment or maps outside the sandbox"));
    rows.add(
        none != null
            ? new Capability(Dimension.SIGNAL_SCOPING, false, none)
            : abi >= 6
                ? new Capability(
                    Dimension.SIGNAL_SCOPING,
                    true,
                    "Landlock ABI "
                        + abi
                        + ": children cannot signal processes outside their domain (the JVM) or"
                        + " connect to its abstract unix sockets")
                : new Capability(
                    Dimension.SIGNAL_SCOPING,
                    false,
                    "needs Landlock ABI 6 (this kernel has "
                        + abi
                        + "): children can signal the JVM"));
    rows.add(netDenyRow(none));
    ConfinedRunner.ProxiedWay way = ConfinedRunner.proxiedNetwork(runner.rootless());
    String proxiedWhyNot =
        none != null ? none : way.availability().unavailabilityCause().orElse(null);
    String detail =
        way.network() == Network.SUPERVISED
            ? (way.inNamespace()
                    ? "private network namespace (only lo) whose one way out is the egress proxy's"
                        + " listener at 127.0.0.1 in it, and "
                    : "")
                + "the children's own TCP connects and binds refused (Landlock ABI 4), no UDP, raw or"
                + " other inet sockets (seccomp), every connect stopped for the connect supervisor"
                + " (seccomp user notification), which connects the child's socket itself, always"
                + " to the egress proxy's loopback listener (which serves only what it admitted):"
                + " through the proxy variables HTTP forwarding, CONNECT and SOCKS5 decided by"
                + " name; any other TCP connection transparently, decided by the name the proxy's"
                + " DNS answered for its address, else the TLS SNI or HTTP Host it sends, else by"
                + " address only (IP rules); DNS over TCP answered by the proxy (RES_OPTIONS=use-vc"
                + " for glibc; resolvers that insist on UDP resolve nothing); unix sockets: stream"
                + " and seqpacket only, connected by the supervisor to the socket file it opened"
                + " when the children could have made it (beneath a writable path) or the policy"
                + " lists it, else EACCES (the host's daemons out of reach); abstract and datagram"
                + " unix sockets refused"
            : "private network namespace (only lo) whose one way out is the egress proxy's"
                + " listener at 127.0.0.1 in it, served from the host: HTTP forwarding, CONNECT and"
                + " SOCKS5 decided by the rules (docs/proxy.md), the proxy variables set; a program"
                + " that ignores them reaches nothing (no transparent redirection as root); unix"
                + " sockets on the filesystem (host daemons') stay reachable, and a policy that"
                + " lists unix sockets is refused (it needs the connect supervisor, which cannot"
                + " run here)";
    for (Dimension d : List.of(Dimension.NET_ALLOW_LIST, Dimension.NET_PROXY)) {
      rows.add(
          proxiedWhyNot != null
              ? new Capability(d, false, proxiedWhyNot)
              : new Capability(d, true, detail));
    }
    rows.add(readOnlyHostRow(none));
    rows.add(
        held(
            Dimension.NO_NEW_PRIVS,
            none,
            "set for every child (Landlock and seccomp need it): setuid and file-capability"
                + " programs (sudo, su, some pings) run without their privileges"));
    if (none != null) {
      for (Dimension d :
          List.of(
              Dimension.MEMORY,
              Dimension.CPU,
              Dimension.CPU_THROTTLE,
              Dimension.PIDS,
              Dimension.TREE_KILL)) {
        rows.add(new Capability(d, false, none));
      }
    } else {
      caps.addRows(
          rows,
          null,
          childrenCanWriteCgroups()
              ? "a writable path holds the cgroup filesystem, so a child can move itself out of its"
                  + " cgroup"
              : "the children cannot write the cgroup filesystem (their writes are bounded), so"
                  + " they cannot leave their cgroup");
    }
    rows.add(new Capability(Dimension.DISK, false, "no quota mechanism"));
    return rows;
  }

  /** Whether a writable path holds (part of) the cgroup filesystem. */
  private boolean childrenCanWriteCgroups() {
    Path cgroupFs = Path.of("/sys/fs/cgroup");
    for (String w : union(runner.root(), runner.writablePaths())) {
      Path p = Path.of(w);
      if (p.startsWith(cgroupFs) || cgroupFs.startsWith(p)) {
        return true;
      }
    }
    return false;
  }

  private static List<String> union(Path root, List<String> writable) {
    List<String> all = new ArrayList<>();
    all.add(root.toString());
    all.addAll(writable);
    return all;
  }

  /** {@code d} held as {@code how}, or not held because {@code none} (when it is not null). */
  private static Capability held(Dimension d, String none, String how) {
    return none != null ? new Capability(d, false, none) : new Capability(d, true, how);
  }

  private static Capability capabilitiesRow(String none) {
    if (none != null) {
      return new Capability(Dimension.CAPABILITIES, false, none);
    }
    return Credentials.canClearBoundingSet()
        ? new Capability(
            Dimension.CAPABILITIES,
            true,
            "none: every child starts with empty bounding, ambient, inheritable, permitted and"
                + " effective sets (cleared on its confinement thread alone), securebits NOROOT"
                + " and NO_CAP_AMBIENT_RAISE locked, so not even uid 0 gains any at exec")
        : new Capability(
            Dimension.CAPABILITIES,
            true,
            "none: the children's ambient, inheritable, permitted and effective sets are empty;"
                + " the bounding set stays (this JVM lacks CAP_SETPCAP) and no_new_privs keeps"
                + " setuid and file-capability programs from granting any");
  }

  private Capability userRow(String none) {
    if (none != null) {
      return new Capability(Dimension.USER, false, none);
    }
    int jvm = Credentials.processUid();
    if (user != null) {
      return jvm == 0
          ? new Capability(
              Dimension.USER,
              true,
              "children run as uid "
                  + user.uid()
                  + ", gid "
                  + user.gid()
                  + " (supplementary groups: "
                  + user.gid()
                  + " only), switched on their confinement thread alone; the JVM stays uid 0")
          : new Capability(
              Dimension.USER,
              false,
              "running as another user needs root (this JVM runs as uid " + jvm + ")");
    }
    return new Capability(
        Dimension.USER,
        false,
        "children run as this JVM's user, uid "
            + jvm
            + (jvm == 0 ? " (without capabilities); runAs(uid, gid) or --user to change it" : ""));
  }

  private Capability netDenyRow(String none) {
    return held(Dimension.NET_DENY_ALL, none, none != null ? null : netDenyDetail());
  }

  /**
   * What DENY_ALL does with unix sockets here: the connect supervisor decides each (where it can
   * run), else the host daemons' stay reachable.
   */
  private static String unixSocketsDetail() {
    return ConnectSupervisor.unixAvailability()
        .unavailabilityCause()
        .map(
            why ->
                "host daemons' unix sockets on the filesystem stay reachable (no connect"
                    + " supervisor: "
                    + why
                    + ")")
        .orElse(
            "unix sockets: only the children's own (beneath the paths they may write; every"
                + " connect made by the connect supervisor, which resolves the socket file: the"
                + " host daemons' refused, also through a symbolic link or a relative path;"
                + " abstract names and unix datagram sockets refused)");
  }

  private String netDenyDetail() {
    if (denyAllNetwork() == Network.NAMESPACE) {
      return "private network namespace (only lo, up; loopback works inside); socket families "
          + String.join(", ", SeccompFilter.socketFamilies(Network.NAMESPACE))
          + " only (INET reaches only the namespace's loopback, NETLINK_ROUTE only its"
          + " interfaces; every other family, VSOCK, PACKET and XDP among them, refused with"
          + " EACCES), io_uring refused (EPERM); children have no capabilities, so they cannot"
          + " setns out; "
          + unixSocketsDetail();
    }
    String whyNoNamespace =
        runner.rootless()
            ? "rootless forced"
            : ThreadNamespaces.networkAvailability().unavailabilityCause().orElse("unavailable");
    return "seccomp: socket family "
        + String.join(", ", SeccompFilter.socketFamilies(Network.SECCOMP))
        + " only (every other family, INET, INET6, VSOCK, NETLINK, PACKET and XDP among them,"
        + " refused with EACCES, loopback too), io_uring refused"
        + " (EPERM); "
        + unixSocketsDetail()
        + "; no network namespace ("
        + whyNoNamespace
        + ")";
  }

  private Capability readOnlyHostRow(String none) {
    if (none != null) {
      return new Capability(Dimension.READ_ONLY_HOST, false, none);
    }
    if (runner.rootless()) {
      return new Capability(
          Dimension.READ_ONLY_HOST,
          false,
          "needs a private mount namespace (root); rootless forced");
    }
    Optional<String> cause = ThreadNamespaces.mountAvailability().unavailabilityCause();
    if (cause.isPresent()) {
      return new Capability(
          Dimension.READ_ONLY_HOST, false, "needs a private mount namespace: " + cause.get());
    }
    if (!runner.readOnlyHost()) {
      return new Capability(
          Dimension.READ_ONLY_HOST,
          false,
          "not requested (readOnlyHost(true), --read-only-host); available here");
    }
    return new Capability(
        Dimension.READ_ONLY_HOST,
        true,
        "private mount namespace: every mount read-only (EROFS) except the writable paths, which"
            + " also refuses the chmod, chown, xattr and timestamp changes Landlock does not cover;"
            + " links and renames between different writable paths fail with EXDEV");
  }

  private Network denyAllNetwork() {
    return runner.denyAllNetwork();
  }
}
