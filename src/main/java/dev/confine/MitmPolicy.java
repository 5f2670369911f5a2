package dev.confine;

import java.util.List;

/**
 * Opt-in TLS interception of CONNECT tunnels by the filtering proxy.
 *
 * <p>Not enabled leaves tunnels untouched. Host selection: {@code excludeHosts} always wins (raw
 * tunnel); otherwise, when {@code hosts} is non-empty only those are intercepted, and when it is
 * empty every tunnel is. Host forms are those of {@link NetRule}.
 *
 * @param enabled whether to intercept at all
 * @param inspectBodies whether request and response bodies are shown to hooks
 * @param maxBodyBytes the most body bytes shown to hooks (0 = the proxy's default)
 * @param hosts hosts to intercept (empty = all)
 * @param excludeHosts hosts never intercepted
 */
public record MitmPolicy(
    boolean enabled,
    boolean inspectBodies,
    long maxBodyBytes,
    List<String> hosts,
    List<String> excludeHosts) {

  /**
   * Copies the lists; null lists become empty. Entries are checked by {@link NetPolicy#validate()}.
   */
  public MitmPolicy {
    hosts = NetPolicy.copyOrEmpty(hosts);
    excludeHosts = NetPolicy.copyOrEmpty(excludeHosts);
  }

  /** Interception of every CONNECT tunnel, without body inspection. */
  public static MitmPolicy all() {
    return new MitmPolicy(true, false, 0, List.of(), List.of());
  }
}
