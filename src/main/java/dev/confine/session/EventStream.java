package dev.confine.session;

import java.time.Duration;

/**
 * The events of one watcher, in order: a replay of the retained output, then live events. Bounded
 * (256 events): a watcher that falls behind gets a {@link ProcessEvent.Type#LAG} event and the
 * stream ends; it recovers by reading from the lag's offset or by watching again. The stream also
 * ends after a {@link ProcessEvent.Type#CLOSED} event and when it is closed. Thread-safe.
 */
public interface EventStream extends AutoCloseable {
  /**
   * The next event, waiting for one.
   *
   * @return the event, or null when the stream has ended and every event was taken
   */
  ProcessEvent take() throws InterruptedException;

  /**
   * The next event, waiting at most {@code timeout}.
   *
   * @return the event, or null when none came in time or the stream has ended (see {@link
   *     #isEnded()})
   */
  ProcessEvent poll(Duration timeout) throws InterruptedException;

  /** Whether the stream has ended and every event was taken. */
  boolean isEnded();

  /** Stops the stream; events not taken yet are dropped. Idempotent. */
  @Override
  void close();
}
