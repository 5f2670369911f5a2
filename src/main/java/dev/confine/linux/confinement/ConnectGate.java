package dev.confine.linux.confinement;

import java.net.InetSocketAddress;

/**
 * Where the {@link ConnectSupervisor} sends the connects of a supervised confinement's children
 * (every {@link ConfinementThreads.Network#SUPERVISED} one, and DENY_ALL ones where the kernel
 * allows: see {@link ConfinementThreads.Confinement}). Its methods run on the supervisor thread,
 * while the child waits: they must be quick and must not block.
 */
public interface ConnectGate {
  /**
   * The address that a child's connect to {@code destination} is made to instead (the egress
   * proxy's loopback listener, IPv4; in a network namespace of the children's own, the destination
   * itself), or null when it is refused (the child's call fails with EACCES).
   */
  InetSocketAddress route(InetSocketAddress destination);

  /**
   * Whether inet sockets other than TCP ones (UDP, ping) are refused their connects: true (the
   * default) on the host's network, false in a network namespace of the children's own, where they
   * reach only its loopback.
   */
  default boolean tcpOnly() {
    return true;
  }

  /**
   * Whether a child may connect to the unix socket at {@code realPath} (the socket file it named,
   * every symbolic link resolved: the supervisor opened it and connects to what it opened).
   */
  boolean mayConnectUnix(String realPath);

  /**
   * The connection just made (or under way) from 127.0.0.1:{@code port} to the {@link #route} of
   * {@code destination} is a child's: whoever accepts it may have done so a moment before.
   */
  void admit(int port, InetSocketAddress destination);
}
