package dev.confine.session;

import java.time.Instant;
import java.util.List;

/**
 * A snapshot of one session, as {@link ProcessManager#list()} reports it.
 *
 * @param id the session's id
 * @param argv the program and its arguments
 * @param tty whether it runs on a terminal
 * @param pid the child's pid (0 while it is still being spawned)
 * @param startedAt when the start was requested
 * @param running whether the process has not ended yet
 * @param exit how it ended; null while running
 */
public record ProcessInfo(
    String id,
    List<String> argv,
    boolean tty,
    int pid,
    Instant startedAt,
    boolean running,
    ProcessExit exit) {
  /** Copies {@code argv}. */
  public ProcessInfo {
    argv = List.copyOf(argv);
  }
}
