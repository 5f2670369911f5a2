package dev.confine.seatbelt;

import dev.confine.ByteStrings;
import dev.confine.NetMode;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.host.GoQuote;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The Seatbelt (SBPL) profile the seatbelt backend hands {@code sandbox-exec -p}: the seed's text,
 * byte for byte (flowcraft {@code sdkx/sandbox/seatbelt/profile.go} at {@code sdkx/v0.5.5}). Reads
 * and process execution stay allowed; every write is denied except beneath the writable paths and
 * to {@code /dev/null}; the network section follows the mode.
 *
 * <p>Pure: no file system, no host. Paths are quoted as Go's {@code strconv.Quote} quotes (see
 * {@link #quote}).
 */
final class SeatbeltProfile {
  /**
   * The Mach services macOS needs for TLS and network configuration, re-allowed before the blanket
   * network deny of ALLOW_LIST and PROXY (the seed's list, in its order).
   */
  static final List<String> PLATFORM_SERVICES =
      List.of(
          "com.apple.bsd.dirhelper",
          "com.apple.system.opendirectoryd.membership",
          "com.apple.SecurityServer",
          "com.apple.networkd",
          "com.apple.ocspd",
          "com.apple.trustd.agent",
          "com.apple.SystemConfiguration.DNSConfiguration",
          "com.apple.SystemConfiguration.configd");

  private SeatbeltProfile() {}

  /**
   * The profile for children that may write beneath {@code writable} (in order; empty entries are
   * skipped, as the seed skips them) under network {@code mode}. DEFAULT adds no network rule (the
   * host's network); DENY_ALL denies all of it; ALLOW_LIST and PROXY allow the platform sockets and
   * services macOS needs, deny the rest and open one hole: TCP to the enforcement proxy on loopback
   * at {@code proxyPort}, which these modes need (it is ignored by the others).
   *
   * <p>The seed's {@code default} branch, an unknown mode (NOT_AVAILABLE), has no Java twin: a
   * {@link NetMode} is one of the four.
   *
   * @throws SandboxException INTERNAL when ALLOW_LIST or PROXY comes without a proxy port in 1 to
   *     65535; VALIDATION when a path holds an unpaired surrogate that stands for no byte (see
   *     {@link ByteStrings})
   * @throws NullPointerException when {@code writable}, one of its entries or {@code mode} is null
   */
  static String of(List<String> writable, NetMode mode, int proxyPort) {
    Objects.requireNonNull(mode, "mode");
    StringBuilder b = new StringBuilder(256);
    b.append("(version 1)\n");
    b.append("(allow default)\n");
    b.append("(deny file-write*)\n");
    for (String path : writable) {
      Objects.requireNonNull(path, "writable path");
      if (path.isEmpty()) {
        continue;
      }
      b.append("(allow file-write* (subpath ").append(quote(path)).append("))\n");
    }
    b.append("(allow file-write* (literal \"/dev/null\"))\n");
    switch (mode) {
      case DEFAULT -> {
        // No network rule: the host's network, as NetMode.DEFAULT means.
      }
      case DENY_ALL -> b.append("(deny network*)\n");
      case ALLOW_LIST, PROXY -> {
        if (proxyPort <= 0 || proxyPort > 65535) {
          throw SandboxException.of(
              Kind.INTERNAL,
              "seatbelt: net mode "
                  + mode.code()
                  + (proxyPort <= 0 ? " requires a positive proxy port, got " : " proxy port ")
                  + proxyPort
                  + (proxyPort <= 0 ? "" : " out of range"));
        }
        restrictedNetwork(b, proxyPort);
      }
    }
    return b.toString();
  }

  /**
   * The ALLOW_LIST / PROXY section: the AF_SYSTEM sockets, Mach services and routing sysctl macOS
   * needs for TLS and network configuration (without them the blanket deny also breaks the TLS
   * handshake), then the blanket deny and the one loopback hole to the enforcement proxy.
   */
  private static void restrictedNetwork(StringBuilder b, int proxyPort) {
    b.append("; platform sockets macOS needs for TLS + network config;\n");
    b.append("; without these the blanket network deny also blocks\n");
    b.append("; SecurityServer / configd and HTTPS fails at the TLS handshake.\n");
    b.append("(allow system-socket\n");
    b.append("  (require-all\n");
    b.append("    (socket-domain AF_SYSTEM)\n");
    b.append("    (socket-protocol 2)\n");
    b.append("  )\n");
    b.append(")\n");
    b.append("(allow mach-lookup\n");
    for (String service : PLATFORM_SERVICES) {
      b.append("  (global-name ").append(quote(service)).append(")\n");
    }
    b.append(")\n");
    b.append("(allow sysctl-read\n");
    b.append("  (sysctl-name-regex #\"^net.routetable\")\n");
    b.append(")\n");
    b.append("(deny network*)\n");
    b.append("(allow network-outbound (remote ip \"localhost:").append(proxyPort).append("\"))\n");
  }

  /**
   * {@code s} quoted exactly as Go's {@code strconv.Quote} quotes the bytes {@code s} stands for
   * ({@link ByteStrings}: UTF-8, with U+DC80 to U+DCFF carrying bytes that are not UTF-8): in
   * double quotes; {@code "} and {@code \} backslashed; printable runes (Unicode letters, marks,
   * numbers, punctuation and symbols, and the ASCII space) kept as they are, non-ASCII included;
   * {@code \a \b \f \n \r \t \v} as those escapes; other runes below U+0020 and U+007F as {@code
   * \xNN}; other non-printable runes as <code>&#92;uNNNN</code>, or <code>&#92;UNNNNNNNN</code>
   * above U+FFFF; and every byte that is not part of well-formed UTF-8 as {@code \xNN}. Hex digits
   * are lower case.
   *
   * <p>A Java String cannot hold ill-formed UTF-8 as such: a byte string that is not UTF-8 reaches
   * here only through {@link ByteStrings}' escapes, and is quoted as Go quotes those bytes (escapes
   * that together form well-formed UTF-8 are that text, as Go would decode it). What is printable
   * is decided by this JDK's Unicode tables, Go's by its own; the two can differ only on code
   * points one Unicode version assigns and the other does not.
   *
   * @throws SandboxException VALIDATION when {@code s} holds an unpaired surrogate outside U+DC80
   *     to U+DCFF, which stands for no byte and so cannot be quoted faithfully
   */
  static String quote(String s) {
    checkHasByteForm(s);
    return GoQuote.of(s);
  }

  /**
   * Refuses what {@link ByteStrings#encode} would write as {@code '?'}: an unpaired surrogate that
   * is not one of the byte escapes.
   */
  private static void checkHasByteForm(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!Character.isSurrogate(c)) {
        continue;
      }
      if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (c < '\uDC80' || c > '\uDCFF') {
        throw SandboxException.of(
            Kind.VALIDATION,
            "seatbelt: "
                + SandboxException.quote(s)
                + " holds an unpaired surrogate (U+"
                + Integer.toHexString(c).toUpperCase(Locale.ROOT)
                + ") that stands for no byte");
      }
    }
  }
}
