package dev.confine.cli;

import dev.confine.ExecResult;
import dev.confine.ResourceUsage;
import dev.confine.SandboxException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The {@code --json} report of one exec: a single JSON object on one line with a fixed set of keys
 * in a fixed order, so that scripts can rely on its shape.
 *
 * <pre>{@code
 * {"exit_code":0,"signal":null,"stdout":"hi\n","stderr":"","stdout_truncated":false,
 *  "stderr_truncated":false,"wall_ms":12.5,"child_ms":3.1,"error":null,
 *  "usage":{"peak_memory_bytes":1277952,"cpu_user_ms":1.2,"cpu_system_ms":0.4,
 *           "pids_limit_hit":false}}
 * }</pre>
 *
 * <p>{@code wall_ms} is the whole call, the up to 2 s of waiting for output that background
 * processes hold after the child exited included; {@code child_ms} is the child's own run, from its
 * spawn to its exit.
 *
 * <p>{@code usage} holds what the backend measured of the whole process tree (with resource caps:
 * cgroups or the /proc sampler); a value it did not measure is null.
 *
 * <p>Output is decoded as UTF-8 with malformed bytes replaced by U+FFFD, since JSON strings cannot
 * hold arbitrary bytes; callers that need the exact bytes run without {@code --json}. The output is
 * decoded, escaped and written a few KiB at a time, never built as one string: escaped, a captured
 * stream can grow sixfold (a NUL byte is six characters), more than a Java string or the heap could
 * hold.
 */
final class JsonOutput {
  private static final byte[] NONE = new byte[0];

  private JsonOutput() {}

  /**
   * The report of {@code outcome} as a string: what {@link #write} writes, without the newline. For
   * tests and small results; the command writes with {@link #write}.
   */
  static String of(Outcome outcome) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, false, StandardCharsets.UTF_8);
    write(outcome, out);
    String line = bytes.toString(StandardCharsets.UTF_8);
    return line.substring(0, line.length() - 1);
  }

  /**
   * Writes the report of {@code outcome} as one line (UTF-8, ending in a newline) and flushes: the
   * fields of its result (the partial result of an error that carries one), or those of a child
   * that never started (exit code -1, no output, zero time) when there is no result; {@code error}
   * is null or an object with the error's kind and message.
   */
  static void write(Outcome outcome, PrintStream out) {
    ExecResult r = outcome.result();
    Utf8Writer w = new Utf8Writer(out);
    w.text(
        "{\"exit_code\":"
            + (r == null ? -1 : r.exitCode())
            + ",\"signal\":"
            + (r == null || !r.signaled() ? "null" : r.signal())
            + ",\"stdout\":");
    w.quoted(r == null ? NONE : r.stdout());
    w.text(",\"stderr\":");
    w.quoted(r == null ? NONE : r.stderr());
    w.text(rest(outcome, r));
    w.text("\n");
    w.flush();
  }

  private static String rest(Outcome outcome, ExecResult r) {
    StringBuilder b = new StringBuilder(256);
    b.append(",\"stdout_truncated\":").append(r != null && r.stdoutTruncated());
    b.append(",\"stderr_truncated\":").append(r != null && r.stderrTruncated());
    b.append(",\"wall_ms\":").append(r == null ? "0" : millis(r.wallTime()));
    b.append(",\"child_ms\":").append(r == null ? "0" : millis(r.childTime()));
    b.append(",\"error\":");
    SandboxException e = outcome.error();
    if (e == null) {
      b.append("null");
    } else {
      b.append("{\"kind\":");
      JsonString.appendQuoted(b, e.kind().name());
      b.append(",\"message\":");
      JsonString.appendQuoted(b, e.getMessage());
      b.append('}');
    }
    ResourceUsage u = r == null ? ResourceUsage.NOT_MEASURED : r.usage();
    b.append(",\"usage\":{\"peak_memory_bytes\":")
        .append(u.peakMemoryBytes() < 0 ? "null" : Long.toString(u.peakMemoryBytes()));
    b.append(",\"cpu_user_ms\":").append(u.cpuUser() == null ? "null" : millis(u.cpuUser()));
    b.append(",\"cpu_system_ms\":").append(u.cpuSystem() == null ? "null" : millis(u.cpuSystem()));
    b.append(",\"pids_limit_hit\":").append(u.pidsLimitHit()).append('}');
    return b.append('}').toString();
  }

  /**
   * Writes text as UTF-8 through a small buffer, and byte output as a JSON string literal with the
   * escapes of {@link JsonString#appendQuoted}, decoding it as {@code new String(bytes, UTF_8)}
   * would (malformed input becomes U+FFFD) without holding more than a few KiB of it.
   */
  private static final class Utf8Writer {
    // The escapes of JsonString.appendQuoted for the ASCII characters that need one, else null.
    private static final byte[][] ESCAPES = new byte[128][];

    static {
      for (char c = 0; c < 0x20; c++) {
        ESCAPES[c] = String.format("\\u%04x", (int) c).getBytes(StandardCharsets.US_ASCII);
      }
      ESCAPES['"'] = "\\\"".getBytes(StandardCharsets.US_ASCII);
      ESCAPES['\\'] = "\\\\".getBytes(StandardCharsets.US_ASCII);
      ESCAPES['\n'] = "\\n".getBytes(StandardCharsets.US_ASCII);
      ESCAPES['\r'] = "\\r".getBytes(StandardCharsets.US_ASCII);
      ESCAPES['\t'] = "\\t".getBytes(StandardCharsets.US_ASCII);
    }

    private final PrintStream out;
    private final byte[] buf = new byte[16 * 1024];
    private int n;

    Utf8Writer(PrintStream out) {
      this.out = out;
    }

    void text(String s) {
      for (int i = 0; i < s.length(); i++) {
        i = put(s, i);
      }
    }

    void quoted(byte[] bytes) {
      CharsetDecoder decoder =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPLACE)
              .onUnmappableCharacter(CodingErrorAction.REPLACE);
      ByteBuffer in = ByteBuffer.wrap(bytes);
      CharBuffer chars = CharBuffer.allocate(4096);
      byte1('"');
      boolean flushed = false;
      while (true) {
        // The decoder never splits a surrogate pair between two calls: it waits for room for both.
        CoderResult cr = flushed ? decoder.flush(chars) : decoder.decode(in, chars, true);
        chars.flip();
        escape(chars);
        chars.clear();
        if (cr.isUnderflow()) {
          if (flushed) {
            break;
          }
          flushed = true;
        }
      }
      byte1('"');
    }

    private void escape(CharBuffer chars) {
      for (int i = 0; i < chars.length(); i++) {
        char c = chars.charAt(i);
        if (c < 0x80) {
          byte[] escaped = ESCAPES[c];
          if (escaped == null) {
            byte1(c);
          } else {
            for (byte e : escaped) {
              byte1(e);
            }
          }
        } else {
          i = put(chars, i);
        }
      }
    }

    /** Puts the code point at {@code s[i]} as UTF-8; returns the index of its last char. */
    private int put(CharSequence s, int i) {
      char c = s.charAt(i);
      if (c < 0x80) {
        byte1(c);
        return i;
      }
      if (c < 0x800) {
        byte1(0xc0 | (c >> 6));
        byte1(0x80 | (c & 0x3f));
        return i;
      }
      if (Character.isHighSurrogate(c) && i + 1 < s.length()) {
        char low = s.charAt(i + 1);
        if (Character.isLowSurrogate(low)) {
          int cp = Character.toCodePoint(c, low);
          byte1(0xf0 | (cp >> 18));
          byte1(0x80 | ((cp >> 12) & 0x3f));
          byte1(0x80 | ((cp >> 6) & 0x3f));
          byte1(0x80 | (cp & 0x3f));
          return i + 1;
        }
      }
      if (Character.isSurrogate(c)) {
        byte1('?'); // a lone surrogate, as String.getBytes(UTF_8) writes it
        return i;
      }
      byte1(0xe0 | (c >> 12));
      byte1(0x80 | ((c >> 6) & 0x3f));
      byte1(0x80 | (c & 0x3f));
      return i;
    }

    private void byte1(int b) {
      if (n == buf.length) {
        out.write(buf, 0, n);
        n = 0;
      }
      buf[n++] = (byte) b;
    }

    void flush() {
      out.write(buf, 0, n);
      n = 0;
      out.flush();
    }
  }

  /** {@code d} in milliseconds with at most three decimals and no trailing zeros. */
  static String millis(Duration d) {
    BigDecimal ms =
        BigDecimal.valueOf(d.getSeconds())
            .multiply(BigDecimal.valueOf(1000))
            .add(BigDecimal.valueOf(d.getNano(), 6));
    return ms.setScale(3, RoundingMode.HALF_UP).stripTrailingZeros().toPlainString();
  }
}
