package dev.confine.net;

import io.netty.util.NetUtil;
import java.net.IDN;
import java.util.Locale;
import java.util.Optional;

/**
 * Host names and IP literals as the proxy compares them: lower-case ASCII, one trailing dot
 * dropped, Unicode names in punycode (IDNA), IP literals parsed without any lookup.
 */
final class HostNames {
  private static final int MAX_NAME = 253;
  private static final int MAX_LABEL = 63;

  private HostNames() {}

  /**
   * The normalised form of a host name: trimmed, lower-case, without one trailing dot, in punycode.
   *
   * @throws IllegalArgumentException naming what is wrong when the result is not a host name
   *     (empty, a label too long, a character no host name has)
   */
  public static String normalise(String raw) {
    String host = raw.strip();
    if (host.endsWith(".")) {
      host = host.substring(0, host.length() - 1);
    }
    if (host.isEmpty()) {
      throw new IllegalArgumentException("empty host");
    }
    if (!isAscii(host)) {
      try {
        host = IDN.toASCII(host, IDN.ALLOW_UNASSIGNED);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("invalid international host name: " + e.getMessage());
      }
    }
    host = host.toLowerCase(Locale.ROOT);
    checkSyntax(host);
    return host;
  }

  private static boolean isAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) {
        return false;
      }
    }
    return true;
  }

  /** Letters, digits, '-' and '_' in labels of 1..63 characters, at most 253 in all. */
  private static void checkSyntax(String host) {
    if (host.length() > MAX_NAME) {
      throw new IllegalArgumentException("host name longer than " + MAX_NAME + " characters");
    }
    int labelStart = 0;
    for (int i = 0; i <= host.length(); i++) {
      if (i == host.length() || host.charAt(i) == '.') {
        int length = i - labelStart;
        if (length == 0) {
          throw new IllegalArgumentException("empty label in host name");
        }
        if (length > MAX_LABEL) {
          throw new IllegalArgumentException("label longer than " + MAX_LABEL + " characters");
        }
        labelStart = i + 1;
        continue;
      }
      char c = host.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      if (!ok) {
        throw new IllegalArgumentException(
            "character " + describe(c) + " is not allowed in a host name");
      }
    }
  }

  private static String describe(char c) {
    return c < 0x20 || c == 0x7f ? String.format("U+%04X", (int) c) : "'" + c + "'";
  }

  /**
   * The address bytes of an IP literal (4 for IPv4, including an IPv4-mapped IPv6 literal, 16 for
   * IPv6), or empty when {@code host} is not one. Brackets around an IPv6 literal are accepted; a
   * zone ({@code %eth0}) is not. Never resolves anything.
   */
  public static Optional<byte[]> ipLiteral(String host) {
    String h = host.strip();
    if (h.length() > 2 && h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    if (h.indexOf('%') >= 0) {
      return Optional.empty();
    }
    byte[] bytes = NetUtil.createByteArrayFromIpAddressString(h);
    return bytes == null ? Optional.empty() : Optional.of(unmapped(bytes));
  }

  /** The IPv4 address inside an IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}), else as is. */
  static byte[] unmapped(byte[] address) {
    if (address.length != 16) {
      return address;
    }
    for (int i = 0; i < 10; i++) {
      if (address[i] != 0) {
        return address;
      }
    }
    if (address[10] != (byte) 0xff || address[11] != (byte) 0xff) {
      return address;
    }
    return new byte[] {address[12], address[13], address[14], address[15]};
  }

  /** The textual form of address bytes ({@code 10.0.0.1}, {@code ::1}). */
  public static String format(byte[] address) {
    return NetUtil.bytesToIpAddress(address);
  }
}
