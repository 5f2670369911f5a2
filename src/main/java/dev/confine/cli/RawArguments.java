package dev.confine.cli;

import dev.confine.ByteStrings;
import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The command line's arguments with their exact bytes, as {@link ByteStrings}. The JVM decodes
 * {@code main}'s arguments in the locale's encoding and turns bytes it cannot decode into U+FFFD
 * (all of them that are not ASCII under the C locale), so an argument that is not UTF-8 would reach
 * the child changed. The process's own raw argument vector is in {@code /proc/self/cmdline}; the
 * JVM never splits or merges arguments, so {@code main}'s arguments are its last ones.
 */
final class RawArguments {
  private RawArguments() {}

  /**
   * {@code args} (what {@code main} got) with each argument replaced by its raw bytes decoded as
   * ByteStrings, when {@code /proc/self/cmdline} ends in exactly those arguments once decoded as
   * the JVM decodes; otherwise {@code args} unchanged (no /proc, or arguments that came from an
   * {@code @argfile}), which loses nothing that worked before.
   */
  static String[] of(String[] args) {
    byte[] cmdline;
    try {
      cmdline = Files.readAllBytes(Path.of("/proc/self/cmdline"));
    } catch (IOException | RuntimeException e) {
      return args;
    }
    return mapped(split(cmdline), args, jvmCharset());
  }

  private static Charset jvmCharset() {
    try {
      return Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
    } catch (RuntimeException e) {
      return StandardCharsets.UTF_8;
    }
  }

  /** The NUL-terminated strings of {@code cmdline}. */
  static List<byte[]> split(byte[] cmdline) {
    List<byte[]> out = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < cmdline.length; i++) {
      if (cmdline[i] == 0) {
        out.add(Arrays.copyOfRange(cmdline, start, i));
        start = i + 1;
      }
    }
    if (start < cmdline.length) {
      out.add(Arrays.copyOfRange(cmdline, start, cmdline.length));
    }
    return out;
  }

  /**
   * The last {@code args.length} of {@code raw} as ByteStrings, when each of them decoded with
   * {@code jvmCharset} is the argument at its index; else {@code args}.
   */
  static String[] mapped(List<byte[]> raw, String[] args, Charset jvmCharset) {
    int offset = raw.size() - args.length;
    if (offset < 1) { // at least the launcher's own name comes first
      return args;
    }
    String[] exact = new String[args.length];
    for (int i = 0; i < args.length; i++) {
      byte[] bytes = raw.get(offset + i);
      if (!new String(bytes, jvmCharset).equals(args[i])) {
        return args;
      }
      exact[i] = ByteStrings.decode(bytes);
    }
    return exact;
  }
}
