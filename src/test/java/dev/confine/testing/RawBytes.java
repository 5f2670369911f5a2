package dev.confine.testing;

import dev.confine.ByteStrings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;

/**
 * Bytes that are not UTF-8, for tests that check they reach a child verbatim, and the ways to make
 * files with such names (java.nio cannot).
 */
public final class RawBytes {
  /** {@code \xff\xfe\x80abc}: three bytes that are no UTF-8 at all, then ASCII. */
  public static final byte[] NOT_UTF8 = HexFormat.of().parseHex("fffe80616263");

  /** {@link #NOT_UTF8} as a String ({@link ByteStrings}). */
  public static final String NOT_UTF8_STRING = ByteStrings.decode(NOT_UTF8);

  /** The same bytes as a printf format, all ASCII, for a shell command line. */
  public static final String NOT_UTF8_PRINTF = "\\377\\376\\200abc";

  private RawBytes() {}

  /** {@code a} then {@code b}. */
  public static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  /** {@code s} as UTF-8. */
  public static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Runs {@code script} with {@code sh -c} in {@code dir}; {@code $X} holds {@link #NOT_UTF8}.
   *
   * @throws AssertionError when it fails
   */
  public static void sh(Path dir, String script) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder("sh", "-c", "X=\"$(printf '" + NOT_UTF8_PRINTF + "')\"; " + script)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new AssertionError("sh -c " + script + " failed: " + out);
    }
  }
}
