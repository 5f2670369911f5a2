package dev.confine;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * What network the child may reach.
 *
 * <p>Construction only copies (null lists become empty, a null proxy becomes empty, a null mode
 * becomes {@link NetMode#DEFAULT}); {@link #validate()} checks the cross-backend invariants. Which
 * modes a runner can enforce is in its {@link Enforcement#netModes()}. Not enforced by any backend
 * yet: {@link NetMode#ALLOW_LIST} and {@link NetMode#PROXY} (every backend refuses them with
 * NOT_AVAILABLE until the egress proxy lands), and so the rules, the proxy, the unix sockets and
 * MITM; {@code allowHosts} is the seed's older spelling of allow rules, kept for parity.
 *
 * @param mode the posture
 * @param allowHosts deprecated allow entries, compiled as allow rules on any port after {@code
 *     rules}
 * @param rules allow and deny rules; a matching deny always wins
 * @param proxy the upstream proxy URL ({@code http://}, {@code https://} or {@code socks5://}), or
 *     empty for none
 * @param unixSockets absolute paths of unix sockets the child may reach
 * @param mitm TLS interception, or null for none
 */
public record NetPolicy(
    NetMode mode,
    List<String> allowHosts,
    List<NetRule> rules,
    String proxy,
    List<String> unixSockets,
    MitmPolicy mitm) {

  private static final NetPolicy DEFAULT =
      new NetPolicy(NetMode.DEFAULT, List.of(), List.of(), "", List.of(), null);
  private static final NetPolicy DENY_ALL =
      new NetPolicy(NetMode.DENY_ALL, List.of(), List.of(), "", List.of(), null);

  /** Copies; see the class comment for the null defaults. */
  public NetPolicy {
    mode = mode == null ? NetMode.DEFAULT : mode;
    allowHosts = copyOrEmpty(allowHosts);
    rules = copyOrEmpty(rules);
    proxy = proxy == null ? "" : proxy;
    unixSockets = copyOrEmpty(unixSockets);
  }

  /** No network policy: host networking. */
  public static NetPolicy defaults() {
    return DEFAULT;
  }

  /** No network at all. */
  public static NetPolicy denyAll() {
    return DENY_ALL;
  }

  /** Only what {@code rules} allow (and do not deny). */
  public static NetPolicy allowList(NetRule... rules) {
    return new NetPolicy(NetMode.ALLOW_LIST, List.of(), Arrays.asList(rules), "", List.of(), null);
  }

  /** Everything through the proxy at {@code url}, except what {@code rules} deny. */
  public static NetPolicy proxy(String url, NetRule... rules) {
    return new NetPolicy(NetMode.PROXY, List.of(), Arrays.asList(rules), url, List.of(), null);
  }

  /** A builder starting from this policy. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** A builder starting from {@link #defaults()}. */
  public static Builder builder() {
    return new Builder(DEFAULT);
  }

  /**
   * Checks the invariants every backend relies on, in the seed's order; the first failure wins.
   *
   * <ol>
   *   <li>the mode is known (a record always holds a known mode; {@link NetMode#ofCode(int)}
   *       rejects unknown codes);
   *   <li>a proxy URL parses, has scheme {@code http}, {@code https} or {@code socks5} and a host,
   *       and has no password without a username;
   *   <li>every rule has an action, a non-blank host and a port in 0..65535;
   *   <li>every unix socket path is absolute;
   *   <li>with a MITM policy (enabled or not): a non-negative body cap and no blank host entries.
   * </ol>
   *
   * <p>Mode and field consistency (allow hosts with DENY_ALL, say) and host-pattern syntax are not
   * checked here.
   *
   * @return this policy, for chaining
   * @throws SandboxException VALIDATION naming the first violated rule
   */
  public NetPolicy validate() {
    if (!proxy.isEmpty()) {
      validateProxy(proxy);
    }
    for (int i = 0; i < rules.size(); i++) {
      NetRule r = rules.get(i);
      if (r == null) {
        throw invalid("net rule " + i + " is null");
      }
      if (r.action() == null) {
        throw invalid("net rule " + i + " has invalid action null");
      }
      if (r.host() == null || r.host().isBlank()) {
        throw invalid("net rule " + i + " has an empty host");
      }
      if (r.port() < 0 || r.port() > 65535) {
        throw invalid("net rule " + i + " port " + r.port() + " out of range");
      }
    }
    for (String path : unixSockets) {
      if (path == null || !path.startsWith("/")) {
        throw invalid("unix socket path " + Quote.of(path) + " must be absolute");
      }
    }
    if (mitm != null) {
      if (mitm.maxBodyBytes() < 0) {
        throw invalid("mitm.max_body_bytes " + mitm.maxBodyBytes() + " must be >= 0");
      }
      checkEntries(mitm.hosts(), "mitm.hosts");
      checkEntries(mitm.excludeHosts(), "mitm.exclude_hosts");
    }
    return this;
  }

  private static void checkEntries(List<String> hosts, String field) {
    for (int i = 0; i < hosts.size(); i++) {
      if (hosts.get(i) == null || hosts.get(i).isBlank()) {
        throw invalid("" + field + "[" + i + "] is empty");
      }
    }
  }

  private static void validateProxy(String proxy) {
    URI uri;
    try {
      uri = new URI(proxy);
    } catch (URISyntaxException e) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "invalid proxy URL " + Quote.of(proxy) + ": " + e.getReason(),
          e);
    }
    // Schemes are case-insensitive (RFC 3986); Go's url.Parse lower-cases them too.
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https") && !scheme.equals("socks5")) {
      throw invalid("proxy scheme " + Quote.of(scheme) + " must be http, https or socks5");
    }
    // Parsed by hand rather than with URI.getHost(), which is null for names URI deems
    // non-standard (underscores, for one) that resolvers and the proxy accept.
    String authority = uri.getRawAuthority() == null ? "" : uri.getRawAuthority();
    int at = authority.lastIndexOf('@');
    String userInfo = at < 0 ? null : authority.substring(0, at);
    String hostPort = authority.substring(at + 1);
    String host;
    String port;
    if (hostPort.startsWith("[")) {
      int close = hostPort.indexOf(']');
      host = close < 0 ? hostPort : hostPort.substring(1, close);
      port = close < 0 || close + 1 >= hostPort.length() ? "" : hostPort.substring(close + 2);
    } else {
      int colon = hostPort.lastIndexOf(':');
      host = colon < 0 ? hostPort : hostPort.substring(0, colon);
      port = colon < 0 ? "" : hostPort.substring(colon + 1);
    }
    if (!port.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw invalid("invalid proxy URL " + Quote.of(proxy) + ": invalid port " + Quote.of(port));
    }
    if (host.isEmpty()) {
      throw invalid("proxy URL " + Quote.of(proxy) + " has no host");
    }
    if (userInfo != null) {
      int colon = userInfo.indexOf(':');
      if (colon == 0) {
        throw invalid("proxy URL " + Quote.of(proxy) + " has a password but no username");
      }
    }
  }

  private static SandboxException invalid(String detail) {
    return SandboxException.of(SandboxException.Kind.VALIDATION, detail);
  }

  static <T> List<T> copyOrEmpty(List<T> list) {
    // Null entries are kept so that validate() can name them instead of failing here.
    return list == null || list.isEmpty()
        ? List.of()
        : Collections.unmodifiableList(new ArrayList<>(list));
  }

  /** Builds a {@link NetPolicy}. */
  public static final class Builder {
    private NetMode mode;
    private List<String> allowHosts;
    private List<NetRule> rules;
    private String proxy;
    private List<String> unixSockets;
    private MitmPolicy mitm;

    private Builder(NetPolicy from) {
      mode = from.mode;
      allowHosts = from.allowHosts;
      rules = from.rules;
      proxy = from.proxy;
      unixSockets = from.unixSockets;
      mitm = from.mitm;
    }

    /** Sets the mode. */
    public Builder mode(NetMode mode) {
      this.mode = mode;
      return this;
    }

    /** Sets the deprecated allow-host entries. */
    public Builder allowHosts(List<String> allowHosts) {
      this.allowHosts = allowHosts;
      return this;
    }

    /** Sets the rules. */
    public Builder rules(List<NetRule> rules) {
      this.rules = rules;
      return this;
    }

    /** Sets the rules. */
    public Builder rules(NetRule... rules) {
      return rules(Arrays.asList(rules));
    }

    /** Sets the upstream proxy URL. */
    public Builder proxy(String proxy) {
      this.proxy = proxy;
      return this;
    }

    /** Sets the unix sockets the child may reach. */
    public Builder unixSockets(List<String> unixSockets) {
      this.unixSockets = unixSockets;
      return this;
    }

    /** Sets TLS interception. */
    public Builder mitm(MitmPolicy mitm) {
      this.mitm = mitm;
      return this;
    }

    /** The policy (not validated; call {@link NetPolicy#validate()}). */
    public NetPolicy build() {
      return new NetPolicy(mode, allowHosts, rules, proxy, unixSockets, mitm);
    }
  }
}
