package dev.confine.net;

import java.util.Optional;

/**
 * One compiled host pattern of a rule: a name ({@code example.com}: the domain and its subdomains),
 * a wildcard ({@code *.example.com}: subdomains only), an IP literal or a CIDR prefix. Names match
 * only names and IP forms only addresses: a name pattern never matches an IP literal, whatever its
 * digits.
 */
abstract sealed class HostPattern {
  private final String raw;

  private HostPattern(String raw) {
    this.raw = raw;
  }

  /**
   * Compiles a pattern.
   *
   * @throws IllegalArgumentException naming the problem: empty, a {@code *} other than one leading
   *     {@code *.}, an invalid name, a malformed CIDR prefix
   */
  public static HostPattern compile(String raw) {
    String p = raw == null ? "" : raw.strip();
    if (p.isEmpty()) {
      throw new IllegalArgumentException("empty host");
    }
    if (p.startsWith("*.")) {
      String base = p.substring(2);
      if (base.isEmpty() || base.strip().isEmpty()) {
        throw new IllegalArgumentException("wildcard " + quote(p) + " has nothing after \"*.\"");
      }
      if (base.indexOf('*') >= 0) {
        throw new IllegalArgumentException(
            "wildcard " + quote(p) + ": '*' is only allowed as a leading \"*.\"");
      }
      if (HostNames.ipLiteral(base).isPresent()) {
        throw new IllegalArgumentException("wildcard " + quote(p) + " of an IP address");
      }
      return new Name(raw, HostNames.normalise(base), true);
    }
    if (p.indexOf('*') >= 0) {
      throw new IllegalArgumentException(
          "pattern " + quote(p) + ": '*' is only allowed as a leading \"*.\"");
    }
    Optional<byte[]> ip = HostNames.ipLiteral(p);
    if (ip.isPresent()) {
      byte[] a = ip.get();
      return new Cidr(raw, a, a.length * 8);
    }
    int slash = p.indexOf('/');
    if (slash >= 0) {
      return cidr(raw, p, slash);
    }
    return new Name(raw, HostNames.normalise(p), false);
  }

  private static HostPattern cidr(String raw, String p, int slash) {
    Optional<byte[]> network = HostNames.ipLiteral(p.substring(0, slash));
    String bits = p.substring(slash + 1);
    if (network.isEmpty()) {
      throw new IllegalArgumentException("CIDR " + quote(p) + " does not start with an IP address");
    }
    if (bits.isEmpty() || bits.length() > 3 || !bits.chars().allMatch(Character::isDigit)) {
      throw new IllegalArgumentException("CIDR " + quote(p) + " has an invalid prefix length");
    }
    byte[] address = network.get();
    int prefix = Integer.parseInt(bits);
    String literal = p.substring(0, slash);
    boolean mapped = address.length == 4 && literal.indexOf(':') >= 0;
    if (mapped) {
      // ::ffff:10.0.0.0/104 is 10.0.0.0/8: the mapped form compares as IPv4.
      if (prefix < 96) {
        throw new IllegalArgumentException(
            "CIDR " + quote(p) + ": an IPv4-mapped prefix must be at least /96");
      }
      prefix -= 96;
    }
    if (prefix > address.length * 8) {
      throw new IllegalArgumentException(
          "CIDR " + quote(p) + " prefix /" + bits + " is longer than the address");
    }
    return new Cidr(raw, mask(address, prefix), prefix);
  }

  private static byte[] mask(byte[] address, int prefix) {
    byte[] masked = address.clone();
    for (int i = 0; i < masked.length; i++) {
      int keep = Math.max(0, Math.min(8, prefix - i * 8));
      masked[i] = (byte) (masked[i] & (0xff << (8 - keep)));
    }
    return masked;
  }

  private static String quote(String s) {
    return "\"" + s + "\"";
  }

  /** The pattern as written. */
  public final String raw() {
    return raw;
  }

  /** Whether this is an IP literal or CIDR pattern. */
  public abstract boolean isIp();

  /** Whether a normalised host name matches; always false for IP patterns. */
  public abstract boolean matchesName(String normalisedHost);

  /** Whether address bytes (4 or 16, unmapped) match; always false for name patterns. */
  public abstract boolean matchesAddress(byte[] address);

  /**
   * A name pattern: {@code example.com} (the name and every name below it) or {@code *.example.com}
   * (only the names below it).
   */
  static final class Name extends HostPattern {
    private final String base;
    private final String dotBase;
    private final boolean wildcard;

    Name(String raw, String base, boolean wildcard) {
      super(raw);
      this.base = base;
      this.dotBase = "." + base;
      this.wildcard = wildcard;
    }

    /** The name it is anchored at: a host matches if it ends with it after a dot (or is it). */
    String base() {
      return base;
    }

    /** Whether the base itself is excluded ({@code *.}). */
    boolean wildcard() {
      return wildcard;
    }

    @Override
    public boolean isIp() {
      return false;
    }

    @Override
    public boolean matchesName(String host) {
      return host.endsWith(dotBase) || (!wildcard && host.equals(base));
    }

    @Override
    public boolean matchesAddress(byte[] address) {
      return false;
    }
  }

  /** An IP literal (a prefix of the whole address) or a CIDR prefix, kept masked. */
  static final class Cidr extends HostPattern {
    private final byte[] network;
    private final int prefix;

    Cidr(String raw, byte[] network, int prefix) {
      super(raw);
      this.network = network;
      this.prefix = prefix;
    }

    @Override
    public boolean isIp() {
      return true;
    }

    @Override
    public boolean matchesName(String host) {
      return false;
    }

    @Override
    public boolean matchesAddress(byte[] address) {
      if (address.length != network.length) {
        return false;
      }
      int full = prefix / 8;
      for (int i = 0; i < full; i++) {
        if (address[i] != network[i]) {
          return false;
        }
      }
      int rest = prefix % 8;
      if (rest == 0) {
        return true;
      }
      int m = 0xff << (8 - rest);
      return (address[full] & m) == (network[full] & m);
    }
  }
}
