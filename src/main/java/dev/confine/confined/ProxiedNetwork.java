package dev.confine.confined;

import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.SandboxException;
import dev.confine.host.ProgramLookup;
import dev.confine.linux.confinement.ConfinementException;
import dev.confine.linux.confinement.ConfinementThreads;
import dev.confine.linux.confinement.ConfinementThreads.Confinement;
import dev.confine.linux.confinement.ConfinementThreads.Network;
import dev.confine.linux.confinement.ConnectGate;
import dev.confine.linux.confinement.ConnectSupervisor;
import dev.confine.linux.confinement.NetworkNamespace;
import dev.confine.net.EgressProxy;
import dev.confine.net.HostResolver;
import dev.confine.net.PeerAdmissions;
import dev.confine.net.ProxyAuditListener;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The network of ALLOW_LIST and PROXY children, and the egress proxy that decides each destination
 * by the policy. Two ways to it:
 *
 * <ul>
 *   <li>A private network namespace (root) with only loopback, whose one listening socket, at
 *       {@code 127.0.0.1:PORT} in it, the proxy serves from the host's namespace. The children
 *       reach the proxy there and nothing else. No token: nothing outside the namespace can reach
 *       the listener, and everything inside is the policy's. Where the kernel allows, supervised as
 *       well (below), the supervisor's connects made inside the namespace.
 *   <li>{@link Network#SUPERVISED} (rootless, or in the namespace): the children's own TCP connects
 *       are refused and the {@link ConnectSupervisor} connects their sockets on their behalf,
 *       always to the proxy's loopback listener: as its clients when they asked for it, else as
 *       transparent connections it decides by name or address ({@link ProxyGate}). The proxy serves
 *       only the connections the supervisor admitted: no token, and no other process of the host
 *       can use it.
 * </ul>
 *
 * How many execs and sessions use it is the runner's to count ({@link #users}, under its lock).
 */
final class ProxiedNetwork implements AutoCloseable {
  static final String JAVA_TOOL_OPTIONS = "JAVA_TOOL_OPTIONS";
  static final String RES_OPTIONS = "RES_OPTIONS";
  static final String GIT_SSH_COMMAND = "GIT_SSH_COMMAND";

  /**
   * OpenBSD's netcat, the SOCKS5 client of the children's ssh ({@code nc -X 5 -x}: it sends the
   * name it is given, so the proxy decides it by name), or null where the host has none (Debian's
   * {@code netcat-openbsd}). The traditional netcat has no proxy support and is not used.
   */
  static final Path SOCKS_NETCAT = socksNetcat();

  /** The variables whose inherited value the children's get added to rather than replaced by. */
  static final Set<String> APPENDED = Set.of(JAVA_TOOL_OPTIONS, RES_OPTIONS);

  private final NetworkNamespace namespace;
  private final EgressProxy proxy;
  private final Confinement confinement;
  private final Map<String, String> environment;

  /** The execs and sessions using it; guarded by the runner. */
  int users;

  private ProxiedNetwork(NetworkNamespace namespace, EgressProxy proxy, Confinement confinement) {
    this.namespace = namespace;
    this.proxy = proxy;
    this.confinement = confinement;
    this.environment = childEnvironment(proxy, confinement.network() == Network.SUPERVISED);
  }

  /** The confinement whose threads join the namespace. */
  Confinement confinement() {
    return confinement;
  }

  /**
   * How the runner's proxies are made.
   *
   * @param audit receives the proxy's decisions and closed connections
   * @param outboundRoots the CAs the proxy trusts on its own TLS connections (empty: the JDK's)
   * @param resolver how the proxy resolves names
   */
  record Settings(
      ProxyAuditListener audit, List<X509Certificate> outboundRoots, HostResolver resolver) {}

  /** Makes the confinement of a network, with its namespace to join or its gate. */
  interface Confinements {
    Confinement make(Network network, NetworkNamespace namespace, ConnectGate gate);
  }

  /**
   * Starts the supervisor (for {@link Network#SUPERVISED}), makes the namespace (for a way in one)
   * and starts the proxy: on the namespace's listener, or on loopback admitting only what the
   * supervisor admits.
   *
   * @param settings how the proxy is made
   * @param writable where the children may write (supervised: the unix sockets beneath are theirs
   *     to connect to)
   * @param confinements makes the confinement
   * @throws SandboxException VALIDATION for a policy the proxy cannot take, NOT_AVAILABLE when the
   *     namespace, the supervisor or the proxy cannot be made
   */
  static ProxiedNetwork start(
      ConfinedRunner.ProxiedWay way,
      NetPolicy policy,
      Settings settings,
      List<String> writable,
      Confinements confinements) {
    boolean supervised = way.network() == Network.SUPERVISED;
    if (supervised) {
      startSupervisor(policy.mode());
    }
    NetworkNamespace ns = way.inNamespace() ? namespace(policy) : null;
    try {
      EgressProxy.Builder b =
          EgressProxy.builder(policy)
              .audit(settings.audit())
              .outboundRoots(settings.outboundRoots())
              .resolver(settings.resolver());
      if (ns != null) {
        b.listenOn(ns.takeListener()).requireToken(false);
      } else {
        b.listenOnLoopback();
      }
      PeerAdmissions admissions = new PeerAdmissions();
      if (supervised) {
        b.admitOnly(admissions);
      }
      EgressProxy proxy = b.start();
      ProxyGate gate =
          supervised
              ? new ProxyGate(
                  proxy.address().orElseThrow(),
                  admissions,
                  policy.unixSockets(),
                  List.copyOf(writable))
              : null;
      return new ProxiedNetwork(ns, proxy, confinements.make(way.network(), ns, gate));
    } catch (RuntimeException e) {
      if (ns != null) {
        ns.close();
      }
      throw e;
    }
  }

  /**
   * Starts the connect supervisor (once per JVM) for children under {@code mode}.
   *
   * @throws SandboxException NOT_AVAILABLE when it cannot start
   */
  static void startSupervisor(NetMode mode) {
    try {
      ConnectSupervisor.start();
    } catch (ConfinementException e) {
      throw SandboxException.of(
          SandboxException.Kind.NOT_AVAILABLE,
          "net policy " + mode + ": the connect supervisor: " + e.getMessage(),
          e);
    }
  }

  private static NetworkNamespace namespace(NetPolicy policy) {
    try {
      return NetworkNamespace.create();
    } catch (ConfinementException e) {
      throw SandboxException.of(
          SandboxException.Kind.NOT_AVAILABLE,
          "net policy " + policy.mode() + ": the private network namespace: " + e.getMessage(),
          e);
    }
  }

  /**
   * The gate of supervised children: every TCP connect goes to the proxy, admitted as a proxy
   * client when the child asked for the proxy's address, else as a transparent connection to the
   * address it asked for (which the proxy decides by the name it carries, or by that address).
   */
  record ProxyGate(
      InetSocketAddress proxy,
      PeerAdmissions admissions,
      List<String> unixSockets,
      List<String> writable)
      implements ConnectGate {
    @Override
    public InetSocketAddress route(InetSocketAddress destination) {
      return proxy;
    }

    /**
     * A unix socket the children could have made themselves (beneath a path they may write), or one
     * the policy lists (compared by the real path of each, now: a daemon's socket may have been
     * made anew); no other: the host's daemons (Docker's, D-Bus's, the resolver's) are out of
     * reach.
     */
    @Override
    public boolean mayConnectUnix(String realPath) {
      if (DenyAllGate.beneath(writable, realPath)) {
        return true;
      }
      for (String listed : unixSockets) {
        try {
          if (Path.of(listed).toRealPath().toString().equals(realPath)) {
            return true;
          }
        } catch (IOException | RuntimeException e) {
          // gone: not this one
        }
      }
      return false;
    }

    @Override
    public void admit(int port, InetSocketAddress destination) {
      if (proxy.equals(destination)) {
        admissions.admit(port);
      } else {
        admissions.admitTransparent(port, destination);
      }
    }
  }

  /**
   * The variables that send the children's clients to the proxy: the proxy's own ({@code
   * HTTP_PROXY}, {@code HTTPS_PROXY}, {@code ALL_PROXY}, lower-case forms, an empty {@code
   * NO_PROXY}) and {@code JAVA_TOOL_OPTIONS} with the JDK's proxy properties, which JVMs read
   * instead of the variables (HTTP and HTTPS through the HTTP proxy, other sockets through SOCKS5,
   * no host exempt, as {@code NO_PROXY} says). A JVM started with it prints one "Picked up
   * JAVA_TOOL_OPTIONS" line on stderr; {@code NODE_USE_ENV_PROXY=1} for Node 24 and newer; {@code
   * GIT_SSH_COMMAND} for git over ssh, whose ProxyCommand is OpenBSD's netcat to the SOCKS5
   * listener (where the host has it: {@link #SOCKS_NETCAT}; ssh itself reads no variable).
   * Supervised, also {@code RES_OPTIONS=use-vc}: glibc's resolver then asks its name server over
   * TCP, which the proxy answers. Made once: the proxy's address and bundle do not change.
   */
  Map<String, String> environment() {
    return environment;
  }

  private static Map<String, String> childEnvironment(EgressProxy proxy, boolean supervised) {
    Map<String, String> env = new LinkedHashMap<>(proxy.environment());
    // Node 24's fetch and http honour the proxy variables only when told to (older Nodes ignore
    // it; supervised, their connections are decided transparently anyway).
    env.put("NODE_USE_ENV_PROXY", "1");
    if (SOCKS_NETCAT != null) {
      proxy
          .socksUrl()
          .filter(url -> !url.contains("@"))
          .ifPresent(
              url -> {
                String proxyHostPort = url.substring(url.indexOf("//") + 2);
                env.put(
                    GIT_SSH_COMMAND,
                    "ssh -o 'ProxyCommand="
                        + SOCKS_NETCAT
                        + " -X 5 -x "
                        + proxyHostPort
                        + " %h %p'");
              });
    }
    if (supervised) {
      // glibc's resolver over TCP: the supervisor sends its connect to the name server to the
      // proxy, which answers (UDP is refused).
      env.put(RES_OPTIONS, "use-vc");
    }
    proxy
        .address()
        .ifPresent(
            a -> {
              String host = a.getAddress().getHostAddress();
              int port = a.getPort();
              String java =
                  String.join(
                      " ",
                      "-Dhttp.proxyHost=" + host,
                      "-Dhttp.proxyPort=" + port,
                      "-Dhttps.proxyHost=" + host,
                      "-Dhttps.proxyPort=" + port,
                      "-DsocksProxyHost=" + host,
                      "-DsocksProxyPort=" + port,
                      "-Dhttp.nonProxyHosts=",
                      "-DsocksNonProxyHosts=");
              env.merge(JAVA_TOOL_OPTIONS, java, (theirs, ours) -> theirs + " " + ours);
            });
    return Collections.unmodifiableMap(env);
  }

  private static Path socksNetcat() {
    String path = System.getenv("PATH");
    // Only a plain path goes into the command the children's shell runs: other directories are
    // not searched.
    String plain =
        Stream.concat(
                path == null ? Stream.empty() : Arrays.stream(path.split(":")),
                Stream.of("/usr/bin", "/bin"))
            .filter(dir -> dir.matches("[A-Za-z0-9/._+-]+"))
            .collect(Collectors.joining(":"));
    return ProgramLookup.onPath("nc.openbsd", plain).orElse(null);
  }

  /**
   * Stops the proxy (closing its listener), retires the confinement thread and releases the
   * namespace, if any. A supervised confinement's listener ends once no child is left in it.
   */
  @Override
  public void close() {
    try {
      proxy.close();
    } finally {
      ConfinementThreads.retire(confinement);
      if (namespace != null) {
        namespace.close();
      }
    }
  }
}
