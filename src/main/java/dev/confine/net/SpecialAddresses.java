package dev.confine.net;

import java.util.List;
import java.util.Optional;

/**
 * Addresses that are not the public internet: a name that resolves to one of them reaches the host
 * itself, its local network or a cloud's metadata service, so the proxy goes there only when an IP
 * or CIDR rule allows it. IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6 forms are judged by the
 * IPv4 address inside them.
 */
final class SpecialAddresses {
  private SpecialAddresses() {}

  private record Range(HostPattern prefix, String kind) {}

  private static final List<Range> RANGES =
      List.of(
          range("0.0.0.0/8", "unspecified"),
          range("10.0.0.0/8", "private"),
          range("100.64.0.0/10", "carrier-grade NAT"),
          range("127.0.0.0/8", "loopback"),
          range("169.254.0.0/16", "link-local"),
          range("172.16.0.0/12", "private"),
          range("192.0.0.0/24", "IETF protocol assignment"),
          range("192.0.2.0/24", "documentation"),
          range("192.88.99.0/24", "6to4 relay"),
          range("192.168.0.0/16", "private"),
          range("198.18.0.0/15", "benchmarking"),
          range("198.51.100.0/24", "documentation"),
          range("203.0.113.0/24", "documentation"),
          range("224.0.0.0/4", "multicast"),
          range("240.0.0.0/4", "reserved"),
          range("::/128", "unspecified"),
          range("::1/128", "loopback"),
          range("100::/64", "discard-only"),
          range("2001:db8::/32", "documentation"),
          range("fc00::/7", "unique local (private)"),
          range("fe80::/10", "link-local"),
          range("fec0::/10", "site-local"),
          range("ff00::/8", "multicast"));

  private static Range range(String cidr, String kind) {
    return new Range(HostPattern.compile(cidr), kind);
  }

  /**
   * What kind of non-public address this is ({@code "loopback"}, {@code "private"}, ...), or empty
   * for a public one.
   */
  public static Optional<String> kind(byte[] address) {
    byte[] a = embeddedIpv4(address);
    for (Range r : RANGES) {
      if (r.prefix().matchesAddress(a)) {
        return Optional.of(r.kind());
      }
    }
    return Optional.empty();
  }

  /** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), else as is. */
  static byte[] embeddedIpv4(byte[] address) {
    if (address.length != 16) {
      return address;
    }
    byte[] unmapped = HostNames.unmapped(address);
    if (unmapped.length == 4) {
      return unmapped;
    }
    boolean firstTwelveZero = true;
    for (int i = 0; i < 12; i++) {
      firstTwelveZero &= address[i] == 0;
    }
    // ::a.b.c.d (deprecated IPv4-compatible), but not :: and ::1 themselves.
    if (firstTwelveZero && (address[12] | address[13]) != 0) {
      return tail(address, 12);
    }
    // 64:ff9b::/96, the NAT64 well-known prefix.
    if (address[0] == 0
        && address[1] == 0x64
        && address[2] == (byte) 0xff
        && address[3] == (byte) 0x9b
        && allZero(address, 4, 12)) {
      return tail(address, 12);
    }
    // 2002::/16, 6to4: the IPv4 address follows the prefix.
    if (address[0] == 0x20 && address[1] == 0x02) {
      return new byte[] {address[2], address[3], address[4], address[5]};
    }
    return address;
  }

  private static boolean allZero(byte[] a, int from, int to) {
    for (int i = from; i < to; i++) {
      if (a[i] != 0) {
        return false;
      }
    }
    return true;
  }

  private static byte[] tail(byte[] a, int from) {
    return new byte[] {a[from], a[from + 1], a[from + 2], a[from + 3]};
  }
}
