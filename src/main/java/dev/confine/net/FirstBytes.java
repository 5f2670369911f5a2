package dev.confine.net;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The name a client's first bytes carry, read without consuming them: the server name (SNI) of a
 * TLS ClientHello, or the Host of an HTTP/1 request head. Anything malformed or nameless is {@link
 * #NONE} (the empty string); a head not yet complete is {@link #MORE} (null).
 */
final class FirstBytes {
  private FirstBytes() {}

  /** Not enough bytes yet. */
  static final String MORE = null;

  /** No name to be had (another protocol, malformed, or none given). */
  static final String NONE = "";

  /** The largest TLS record (2^14 plus the worst expansion), which a ClientHello must fit. */
  static final int MAX_TLS_RECORD = 16384 + 2048;

  /**
   * The name in {@code in}'s readable bytes: a host name (lower case), {@link #MORE} or {@link
   * #NONE}.
   *
   * @param maxHead the most bytes an HTTP request head may take
   */
  static String name(ByteBuf in, int maxHead) {
    if (!in.isReadable()) {
      return MORE;
    }
    int first = in.getUnsignedByte(in.readerIndex());
    if (first == 0x16) {
      return sni(in);
    }
    if (first >= 'A' && first <= 'Z') {
      return host(in, maxHead);
    }
    return NONE;
  }

  /** The server name of a ClientHello in one TLS handshake record. */
  static String sni(ByteBuf in) {
    int r = in.readerIndex();
    if (in.readableBytes() < 5) {
      return MORE;
    }
    int length = in.getUnsignedShort(r + 3);
    if (in.getUnsignedByte(r + 1) != 3 || length > MAX_TLS_RECORD) {
      return NONE;
    }
    if (in.readableBytes() < 5 + length) {
      return MORE;
    }
    int p = r + 5;
    int end = p + length;
    // Handshake: type 1 (ClientHello), a 24-bit length; then version (2), random (32).
    if (length < 4 || in.getUnsignedByte(p) != 1) {
      return NONE;
    }
    int helloEnd = p + 4 + in.getUnsignedMedium(p + 1);
    if (helloEnd > end) {
      return NONE; // spans records: rare, and then decided by address
    }
    p += 4 + 2 + 32;
    p = skip(in, p, helloEnd, 1); // session id
    p = skip(in, p, helloEnd, 2); // cipher suites
    p = skip(in, p, helloEnd, 1); // compression methods
    if (p < 0 || p + 2 > helloEnd) {
      return NONE;
    }
    int extensionsEnd = p + 2 + in.getUnsignedShort(p);
    p += 2;
    if (extensionsEnd > helloEnd) {
      return NONE;
    }
    while (p + 4 <= extensionsEnd) {
      int type = in.getUnsignedShort(p);
      int size = in.getUnsignedShort(p + 2);
      p += 4;
      if (p + size > extensionsEnd) {
        return NONE;
      }
      if (type == 0) { // server_name: a list of (type, name); type 0 is a host name
        if (size < 2) {
          return NONE; // no room for the list's length
        }
        int q = p + 2;
        int listEnd = Math.min(p + size, p + 2 + in.getUnsignedShort(p));
        while (q + 3 <= listEnd) {
          int nameType = in.getUnsignedByte(q);
          int nameLength = in.getUnsignedShort(q + 1);
          q += 3;
          if (q + nameLength > listEnd) {
            return NONE;
          }
          if (nameType == 0) {
            return hostName(in.toString(q, nameLength, StandardCharsets.US_ASCII));
          }
          q += nameLength;
        }
        return NONE;
      }
      p += size;
    }
    return NONE;
  }

  /** Skips a vector with a {@code lengthBytes}-byte length at {@code p}: its end, or -1. */
  private static int skip(ByteBuf in, int p, int end, int lengthBytes) {
    if (p < 0 || p + lengthBytes > end) {
      return -1;
    }
    int n = lengthBytes == 1 ? in.getUnsignedByte(p) : in.getUnsignedShort(p);
    int next = p + lengthBytes + n;
    return next > end ? -1 : next;
  }

  /** The Host header of an HTTP/1 request head (its port, if any, dropped). */
  static String host(ByteBuf in, int maxHead) {
    int r = in.readerIndex();
    int n = Math.min(in.readableBytes(), maxHead);
    // A method token, then a space.
    int i = 0;
    while (i < n && in.getUnsignedByte(r + i) >= 'A' && in.getUnsignedByte(r + i) <= 'Z') {
      i++;
    }
    if (i == n) {
      return n == maxHead ? NONE : MORE;
    }
    if (i == 0 || in.getUnsignedByte(r + i) != ' ') {
      return NONE;
    }
    int headEnd = -1;
    for (int j = i; j + 3 < n; j++) {
      if (in.getByte(r + j) == '\r'
          && in.getByte(r + j + 1) == '\n'
          && in.getByte(r + j + 2) == '\r'
          && in.getByte(r + j + 3) == '\n') {
        headEnd = j;
        break;
      }
    }
    if (headEnd < 0) {
      return n >= maxHead ? NONE : MORE;
    }
    String head = in.toString(r, headEnd, StandardCharsets.ISO_8859_1);
    for (String line : head.split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("host")) {
        Authority a = Authority.parse(line.substring(colon + 1).trim(), 80);
        return a == null ? NONE : hostName(a.host());
      }
    }
    return NONE;
  }

  private static String hostName(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    if (n.endsWith(".")) {
      n = n.substring(0, n.length() - 1);
    }
    return n.isEmpty() ? NONE : n;
  }
}
