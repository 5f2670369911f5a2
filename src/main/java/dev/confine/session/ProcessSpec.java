package dev.confine.session;

import dev.confine.ExecOptions;
import dev.confine.SandboxException;
import java.util.List;

/**
 * What to start as a session.
 *
 * @param id the session's id; null or empty = generated (20 characters, time-sortable)
 * @param argv the program and its arguments, passed verbatim (no shell)
 * @param tty whether the child gets a terminal (a PTY) instead of pipes
 * @param rows the terminal's rows; zero or negative = 24
 * @param cols the terminal's columns; zero or negative = 80
 * @param options the policy; its {@code maxOutputBytes} bounds the output log (the backend's
 *     default, 10 MiB, when not positive) and its {@code stdin} is ignored (write to the session);
 *     output streams are refused (the session's output is its log)
 */
public record ProcessSpec(
    String id, List<String> argv, boolean tty, int rows, int cols, ExecOptions options) {
  /** Default terminal rows. */
  public static final int DEFAULT_ROWS = 24;

  /** Default terminal columns. */
  public static final int DEFAULT_COLS = 80;

  /**
   * Copies {@code argv}, defaults the id, the size and the options.
   *
   * @throws SandboxException VALIDATION when argv is null, empty or holds a null, or the options
   *     stream the output (a session keeps it in its log, to be read and watched)
   */
  public ProcessSpec {
    id = id == null ? "" : id;
    if (argv == null || argv.isEmpty()) {
      throw SandboxException.of(SandboxException.Kind.VALIDATION, "process argv must not be empty");
    }
    // Not argv.contains(null): immutable lists (List.of) throw NullPointerException for it.
    for (String a : argv) {
      if (a == null) {
        throw SandboxException.of(SandboxException.Kind.VALIDATION, "process argv holds a null");
      }
    }
    argv = List.copyOf(argv);
    rows = rows > 0 ? rows : DEFAULT_ROWS;
    cols = cols > 0 ? cols : DEFAULT_COLS;
    options = ExecOptions.orDefaults(options);
    if (options.stdoutStream() != null || options.stderrStream() != null) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "a session keeps its output in its log (read or watch it); output streams are for exec");
    }
  }

  /** A pipe session running {@code argv} with default options. */
  public static ProcessSpec pipes(List<String> argv) {
    return new ProcessSpec(null, argv, false, 0, 0, null);
  }

  /** A 24x80 terminal session running {@code argv} with default options. */
  public static ProcessSpec terminal(List<String> argv) {
    return new ProcessSpec(null, argv, true, 0, 0, null);
  }

  /** This spec with another id. */
  public ProcessSpec withId(String id) {
    return new ProcessSpec(id, argv, tty, rows, cols, options);
  }

  /** This spec with other options. */
  public ProcessSpec withOptions(ExecOptions options) {
    return new ProcessSpec(id, argv, tty, rows, cols, options);
  }

  /** This spec with another program and arguments. */
  public ProcessSpec withArgv(List<String> argv) {
    return new ProcessSpec(id, argv, tty, rows, cols, options);
  }

  /** This spec with a terminal of {@code rows} x {@code cols}. */
  public ProcessSpec withSize(int rows, int cols) {
    return new ProcessSpec(id, argv, tty, rows, cols, options);
  }
}
