package dev.confine.cli;

import dev.confine.ExecResult;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Writes an outcome without {@code --json}: the child's output bytes unchanged to the matching
 * stream (none when they were streamed as the child wrote them), then Confine's own notes on
 * stderr. The notes come last so that they follow the output they are about, as a user reading the
 * terminal expects.
 */
final class PlainOutput {
  private static final String PREFIX = "confine: ";

  private PlainOutput() {}

  /**
   * Writes {@code outcome} to {@code out} and {@code err}, flushing both.
   *
   * @param streamedCap where a streamed output was cut (the cap); a result that holds its bytes (a
   *     fake's, or one whose stream could not start) was cut at what it holds
   */
  static void write(Outcome outcome, PrintStream out, PrintStream err, long streamedCap) {
    ExecResult r = outcome.result();
    if (r != null) {
      out.writeBytes(r.stdout());
      out.flush();
      err.writeBytes(r.stderr());
      if (r.stdoutTruncated()) {
        note(err, "stdout truncated at " + cut(streamedCap, r.stdoutLength()) + " bytes");
      }
      if (r.stderrTruncated()) {
        note(err, "stderr truncated at " + cut(streamedCap, r.stderrLength()) + " bytes");
      }
    }
    if (outcome.error() != null) {
      note(err, outcome.error().getMessage());
    }
    err.flush();
  }

  /** Where a truncated output was cut: the cap when streamed, else what was kept. */
  private static long cut(long streamedCap, int kept) {
    return kept == 0 ? streamedCap : kept;
  }

  /**
   * Writes {@code "confine: <message>"} as one UTF-8 line, whatever the platform charset, so that
   * it matches the encoding of everything else Confine writes. A message that already names Confine
   * is not prefixed twice.
   */
  static void note(PrintStream err, String message) {
    String line = message.startsWith(PREFIX) ? message : PREFIX + message;
    err.writeBytes((line + "\n").getBytes(StandardCharsets.UTF_8));
  }
}
