package dev.confine.testing;

import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Reading a session's output in tests: up to a marker, or all of it. */
public final class SessionReads {
  private SessionReads() {}

  /**
   * Reads from {@code cursor[0]} on (advancing it) until the text read contains {@code text}.
   *
   * @return everything read by this call
   * @throws AssertionError when the output ends, or 30 s pass, without it
   */
  public static String readUntil(ProcessSession s, long[] cursor, String text)
      throws InterruptedException {
    StringBuilder seen = new StringBuilder();
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!seen.toString().contains(text)) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("never saw " + text + " in: " + seen);
      }
      ProcessOutput out = s.read(cursor[0], 65536, Duration.ofMillis(200));
      seen.append(new String(out.bytes(), StandardCharsets.UTF_8));
      cursor[0] = out.nextSeq();
      if (out.eof() && !seen.toString().contains(text)) {
        throw new AssertionError("end of output without " + text + " in: " + seen);
      }
    }
    return seen.toString();
  }

  /** Everything the session wrote from offset 0, waiting for its end. */
  public static String readAll(ProcessSession s) throws InterruptedException {
    StringBuilder all = new StringBuilder();
    long cursor = 0;
    while (true) {
      ProcessOutput out = s.read(cursor, 65536);
      all.append(new String(out.bytes(), StandardCharsets.UTF_8));
      cursor = out.nextSeq();
      if (out.eof()) {
        return all.toString();
      }
    }
  }
}
