package dev.confine.net;

import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The clients a proxy built with {@link EgressProxy.Builder#admitOnly} serves: connections from the
 * 127.0.0.1 ports admitted here, each once, and no others. Whoever makes the connections on the
 * clients' behalf (the confined runner's connect supervisor) admits each port once its connect is
 * under way: as a proxy client ({@link #admit}), or as a connection the client made to another
 * address ({@link #admitTransparent}), which the proxy decides by the name it carries or by that
 * address. A connection accepted before its admission arrives waits for it (briefly: see {@code
 * ProxyServer}); an admission not taken within a minute (a connect that never arrived) lapses.
 * Thread-safe.
 */
public final class PeerAdmissions {
  private static final long LAPSE_NANOS = 60_000_000_000L;
  private static final int SWEEP_ABOVE = 1024;

  /** One admission: the time it was made and, for a transparent one, where the client aimed. */
  record Admission(long nanos, InetSocketAddress original) {}

  private final Map<Integer, Admission> admitted = new HashMap<>();
  private final Map<Integer, Consumer<Admission>> waiting = new HashMap<>();

  /** No admission yet. */
  public PeerAdmissions() {}

  /** Admits the next connection from 127.0.0.1:{@code port}, a client of the proxy. */
  public void admit(int port) {
    put(port, null);
  }

  /**
   * Admits the next connection from 127.0.0.1:{@code port}, which its client made to {@code
   * original}: the proxy decides it as a CONNECT there (by the name it carries, if any).
   */
  public void admitTransparent(int port, InetSocketAddress original) {
    put(port, Objects.requireNonNull(original, "original"));
  }

  private void put(int port, InetSocketAddress original) {
    long now = System.nanoTime();
    Admission a = new Admission(now, original);
    Consumer<Admission> waiter;
    synchronized (this) {
      waiter = waiting.remove(port);
      if (waiter == null) {
        if (admitted.size() > SWEEP_ABOVE) {
          for (Iterator<Admission> it = admitted.values().iterator(); it.hasNext(); ) {
            if (now - it.next().nanos() > LAPSE_NANOS) {
              it.remove();
            }
          }
        }
        admitted.put(port, a);
        return;
      }
    }
    waiter.accept(a); // outside the lock: it hands over to the connection's event loop
  }

  /**
   * Takes the admission of a connection from {@code port}; when there is none yet, registers {@code
   * waiter} for it and returns null.
   */
  synchronized Admission takeOrWait(int port, Consumer<Admission> waiter) {
    Admission a = admitted.remove(port);
    if (a != null && System.nanoTime() - a.nanos() <= LAPSE_NANOS) {
      return a;
    }
    waiting.put(port, waiter);
    return null;
  }

  /** Stops {@code waiter} waiting: whether it still was (and so was never called). */
  synchronized boolean stopWaiting(int port, Consumer<Admission> waiter) {
    return waiting.remove(port, waiter);
  }

  /** How many admissions wait to be taken (for tests). */
  synchronized int pending() {
    return admitted.size();
  }
}
