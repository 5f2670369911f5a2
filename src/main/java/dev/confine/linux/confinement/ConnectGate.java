package dev.confine.linux.confinement;

import java.net.InetSocketAddress;

/**
 * Where the {@link ConnectSupervisor} sends the TCP connects of a {@link
 * ConfinementThreads.Network#SUPERVISED} confinement's children. Its methods run on the supervisor
 * thread, while the child waits: they must be quick and must not block.
 */
public interface ConnectGate {
  /**
   * The loopback address (IPv4) that a child's TCP connect to {@code destination} is made to
   * instead, or null when it is refused (the child's call fails with EACCES).
   */
  InetSocketAddress route(InetSocketAddress destination);

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
