package dev.confine.net;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;

/**
 * Resolves host names for the egress proxy. The proxy calls it on threads of its own (never on a
 * network thread), once per decision that needs the addresses, and connects only to an address it
 * returned and the rules accepted.
 */
@FunctionalInterface
public interface HostResolver {
  /**
   * The addresses of {@code host} (a normalised ASCII name), in the order to try them.
   *
   * @throws UnknownHostException when the name has no address
   */
  List<InetAddress> resolve(String host) throws UnknownHostException;

  /** The system's resolver ({@link InetAddress#getAllByName}: /etc/hosts, DNS, nsswitch). */
  static HostResolver system() {
    return host -> Arrays.asList(InetAddress.getAllByName(host));
  }
}
