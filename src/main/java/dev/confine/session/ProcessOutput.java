package dev.confine.session;

import java.util.List;

/**
 * The result of one read from a session's output log.
 *
 * @param nextSeq the cursor to pass to the next read: just past the last byte returned, or the
 *     cursor that was asked for when nothing was returned
 * @param chunks the bytes from the cursor on, in order, each with its own offset and stream
 * @param eof whether the session has ended and everything it wrote has been returned: a read from
 *     {@code nextSeq} will return nothing more
 */
public record ProcessOutput(long nextSeq, List<OutputChunk> chunks, boolean eof) {
  /** Copies the list. */
  public ProcessOutput {
    chunks = List.copyOf(chunks);
  }

  /** The bytes of every chunk, concatenated (streams are not told apart). */
  public byte[] bytes() {
    int n = 0;
    for (OutputChunk c : chunks) {
      n += c.length();
    }
    byte[] all = new byte[n];
    int at = 0;
    for (OutputChunk c : chunks) {
      c.buffer().get(all, at, c.length());
      at += c.length();
    }
    return all;
  }
}
