package dev.confine.session;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * Bytes of one output write, as the log keeps them. Chunks are never merged: each is what one read
 * of the child's pipe or terminal returned (or the part of it a reader asked for). Immutable.
 */
public final class OutputChunk {
  private final long seq;
  private final ProcessStream stream;
  private final byte[] data;

  private OutputChunk(long seq, ProcessStream stream, byte[] data, boolean owned) {
    this.seq = seq;
    this.stream = Objects.requireNonNull(stream, "stream");
    this.data = owned ? data : data.clone();
  }

  /**
   * A chunk that takes ownership of {@code data}, for a session implementation that hands out an
   * array it made for this chunk alone: the caller must never change {@code data} afterwards.
   */
  public static OutputChunk adopting(long seq, ProcessStream stream, byte[] data) {
    return new OutputChunk(seq, stream, Objects.requireNonNull(data, "data"), true);
  }

  /**
   * A chunk of a copy of {@code data}.
   *
   * @param seq the byte offset of the first byte in the session's output (0 = the first byte ever)
   * @param stream which output the bytes came from
   */
  public static OutputChunk of(long seq, ProcessStream stream, byte[] data) {
    return new OutputChunk(seq, stream, data, false);
  }

  /** The byte offset of the first byte in the session's output (0 = the first byte ever). */
  public long seq() {
    return seq;
  }

  /** Which output the bytes came from. */
  public ProcessStream stream() {
    return stream;
  }

  /** A copy of the bytes. */
  public byte[] data() {
    return data.clone();
  }

  /** The bytes as a read-only buffer, without copying. */
  public ByteBuffer buffer() {
    return ByteBuffer.wrap(data).asReadOnlyBuffer();
  }

  /** The number of bytes. */
  public int length() {
    return data.length;
  }

  /** The offset just past the last byte. */
  public long end() {
    return seq + data.length;
  }

  /** Equal offset, stream and bytes. */
  @Override
  public boolean equals(Object o) {
    return o instanceof OutputChunk c
        && c.seq == seq
        && c.stream == stream
        && Arrays.equals(c.data, data);
  }

  @Override
  public int hashCode() {
    return Objects.hash(seq, stream, Arrays.hashCode(data));
  }

  @Override
  public String toString() {
    return "OutputChunk[seq=" + seq + ", stream=" + stream + ", length=" + data.length + "]";
  }
}
