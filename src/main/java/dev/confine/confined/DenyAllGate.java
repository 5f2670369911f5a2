package dev.confine.confined;

import dev.confine.linux.confinement.ConnectGate;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * The gate of supervised DENY_ALL children: the unix sockets they may connect to are the ones they
 * could have made themselves (beneath a path they may write), never the host's daemons' (Docker's,
 * D-Bus's, systemd's, an agent's); inet connects only inside a network namespace of their own (as
 * root), made to the address they named (which reaches only its loopback), and none otherwise.
 *
 * @param writable where the children may write (absolute, without symbolic links)
 * @param inNamespace whether the children have a network namespace of their own
 */
record DenyAllGate(List<String> writable, boolean inNamespace) implements ConnectGate {
  DenyAllGate {
    writable = List.copyOf(writable);
  }

  @Override
  public InetSocketAddress route(InetSocketAddress destination) {
    return inNamespace ? destination : null;
  }

  @Override
  public boolean tcpOnly() {
    return !inNamespace;
  }

  @Override
  public boolean mayConnectUnix(String realPath) {
    return beneath(writable, realPath);
  }

  @Override
  public void admit(int port, InetSocketAddress destination) {
    // nobody accepts on the children's behalf
  }

  /** Whether {@code realPath} is one of {@code paths} or beneath one. */
  static boolean beneath(List<String> paths, String realPath) {
    for (String p : paths) {
      if (realPath.equals(p) || realPath.startsWith(p.endsWith("/") ? p : p + "/")) {
        return true;
      }
    }
    return false;
  }
}
