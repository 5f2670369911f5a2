package dev.confine.net;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The clients a proxy built with {@link EgressProxy.Builder#admitOnly} serves: connections from the
 * 127.0.0.1 ports admitted here, each once, and no others. Whoever makes the connections on the
 * clients' behalf (the confined runner's connect supervisor) admits the port before it connects, so
 * that the proxy never sees a connection it cannot place. An admission not taken within a minute (a
 * connect that never arrived) lapses. Thread-safe.
 */
public final class PeerAdmissions {
  private static final long LAPSE_NANOS = 60_000_000_000L;

  private final Map<Integer, Long> admitted = new ConcurrentHashMap<>();

  /** No admission yet. */
  public PeerAdmissions() {}

  /** Admits the next connection from 127.0.0.1:{@code port}. */
  public void admit(int port) {
    long now = System.nanoTime();
    if (admitted.size() > 1024) {
      admitted.values().removeIf(t -> now - t > LAPSE_NANOS);
    }
    admitted.put(port, now);
  }

  /** Withdraws the admission of {@code port} (its connect failed). */
  public void withdraw(int port) {
    admitted.remove(port);
  }

  /** Takes the admission of a connection from {@code port}: whether there was one in time. */
  boolean take(int port) {
    Long at = admitted.remove(port);
    return at != null && System.nanoTime() - at <= LAPSE_NANOS;
  }

  /** How many admissions wait to be taken (for tests). */
  int pending() {
    return admitted.size();
  }
}
