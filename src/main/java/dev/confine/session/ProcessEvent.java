package dev.confine.session;

import java.util.Locale;
import java.util.Objects;

/**
 * One event of a {@link ProcessEventSource#watch() watch}.
 *
 * @param type what happened
 * @param seq OUTPUT: the offset of the first byte; EXITED and CLOSED: the log's end; LAG: the first
 *     byte the watcher missed (resume with {@code read(seq, ...)})
 * @param chunk OUTPUT: the bytes; null otherwise
 * @param exit EXITED: how the process ended; null otherwise
 */
public record ProcessEvent(Type type, long seq, OutputChunk chunk, ProcessExit exit) {
  /** What an event reports. */
  public enum Type {
    /** New output. */
    OUTPUT,
    /** The process ended and every byte it wrote is in the log; the stream stays open. */
    EXITED,
    /** The session was closed; the stream ends after this event. */
    CLOSED,
    /** The watcher fell behind and missed output; the stream ends after this event. */
    LAG;

    /** {@code output}, {@code exited}, {@code closed} or {@code lag}. */
    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Checks the type. */
  public ProcessEvent {
    Objects.requireNonNull(type, "type");
  }

  /** An OUTPUT event for {@code chunk}. */
  public static ProcessEvent output(OutputChunk chunk) {
    return new ProcessEvent(Type.OUTPUT, chunk.seq(), chunk, null);
  }

  /** An EXITED event at {@code seq}. */
  public static ProcessEvent exited(long seq, ProcessExit exit) {
    return new ProcessEvent(Type.EXITED, seq, null, Objects.requireNonNull(exit, "exit"));
  }

  /** A CLOSED event at {@code seq}. */
  public static ProcessEvent closed(long seq) {
    return new ProcessEvent(Type.CLOSED, seq, null, null);
  }

  /** A LAG event: output from {@code seq} on was missed. */
  public static ProcessEvent lag(long seq) {
    return new ProcessEvent(Type.LAG, seq, null, null);
  }
}
