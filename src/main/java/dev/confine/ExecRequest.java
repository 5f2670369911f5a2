package dev.confine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A request to run something, as decorators, predicates and approvers see it. Immutable: what they
 * are shown cannot change what runs.
 *
 * @param command the program as the caller named it
 * @param args the arguments (never null)
 * @param options the effective options (never null)
 * @param tty true only for the start of an interactive terminal session
 */
public record ExecRequest(String command, List<String> args, ExecOptions options, boolean tty) {
  /**
   * Checks the command and arguments, copies {@code args} (null = none) and defaults null options.
   *
   * @throws SandboxException VALIDATION for a null or empty command, a null argument, or NUL in
   *     either (the kernel cannot pass it)
   */
  public ExecRequest {
    if (command == null || command.isEmpty()) {
      throw SandboxException.of(SandboxException.Kind.VALIDATION, "command must not be empty");
    }
    if (command.indexOf('\0') >= 0) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION, "command " + Quote.of(command) + " holds NUL");
    }
    if (args == null || args.isEmpty()) {
      args = List.of();
    } else {
      List<String> copy = new ArrayList<>(args.size());
      for (int i = 0; i < args.size(); i++) {
        String a = args.get(i);
        if (a == null) {
          throw SandboxException.of(SandboxException.Kind.VALIDATION, "argument " + i + " is null");
        }
        if (a.indexOf('\0') >= 0) {
          throw SandboxException.of(
              SandboxException.Kind.VALIDATION, "argument " + i + " " + Quote.of(a) + " holds NUL");
        }
        copy.add(a);
      }
      args = Collections.unmodifiableList(copy);
    }
    options = ExecOptions.orDefaults(options);
  }

  /** A non-interactive request, as {@link Runner#exec} receives it. */
  public static ExecRequest of(String command, List<String> args, ExecOptions options) {
    return new ExecRequest(command, args, options, false);
  }

  /** This request with other options. */
  public ExecRequest withOptions(ExecOptions options) {
    return new ExecRequest(command, args, options, tty);
  }
}
