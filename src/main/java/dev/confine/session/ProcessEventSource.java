package dev.confine.session;

import java.util.Optional;

/** A session whose output can be watched as events; an optional capability. */
public interface ProcessEventSource {
  /**
   * A new watcher: the retained output replayed as OUTPUT events (then EXITED if the process has
   * ended), then live events. When more than 256 events would have to be replayed, the stream holds
   * a single LAG event from the first retained byte instead: read from there.
   *
   * @throws dev.confine.ProcessClosedException when the session is closed
   */
  EventStream watch();

  /** {@code session} as an event source, when it is one. */
  static Optional<ProcessEventSource> of(ProcessSession session) {
    return session instanceof ProcessEventSource s ? Optional.of(s) : Optional.empty();
  }
}
