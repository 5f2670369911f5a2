package dev.confine.linux.confinement;

import dev.confine.testing.HostNamespaces;
import java.io.IOException;

/**
 * Run in a fresh JVM by {@link ThreadNamespacesProbeTest}: the namespace probe is the first thing
 * this JVM does with the engine; then it lists every thread of the JVM that is not in the
 * thread-group leader's network or mount namespace (none may be: the probe's throwaway thread has
 * ended, and it must not have started a JVM thread that inherited its namespaces).
 */
final class NamespaceProbeMain {
  private NamespaceProbeMain() {}

  public static void main(String[] args) throws IOException {
    System.out.println(
        "network="
            + ThreadNamespaces.networkAvailability().unavailabilityCause().orElse("available"));
    System.out.println(
        "mount=" + ThreadNamespaces.mountAvailability().unavailabilityCause().orElse("available"));
    System.out.println("foreign=" + HostNamespaces.threadsOutside());
  }
}
