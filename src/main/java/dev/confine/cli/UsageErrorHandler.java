package dev.confine.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * Reports a wrong command line in one line ({@code confine: <what is wrong> (try 'confine exec
 * --help')}) and exits with {@link ExitStatus#USAGE}: one line is what a caller that logs stderr,
 * or an agent that reads it, can quote whole. Picocli's default prints the whole usage text, which
 * buries the one line that matters; nothing here ever prints a stack trace.
 */
final class UsageErrorHandler implements IParameterExceptionHandler {
  /** Prints the error and the help hint of the command that failed to parse; returns 2. */
  @Override
  public int handleParseException(ParameterException ex, String[] args) {
    CommandLine cmd = ex.getCommandLine();
    PrintWriter err = cmd.getErr();
    err.println(
        "confine: " + message(ex) + " (try '" + cmd.getCommandSpec().qualifiedName() + " --help')");
    err.flush();
    return ExitStatus.USAGE;
  }

  private static String message(ParameterException ex) {
    // Picocli calls an unknown subcommand an "unmatched argument at index 0", which reads oddly.
    if (ex instanceof UnmatchedArgumentException u
        && ex.getCommandLine().getCommandSpec().parent() == null
        && !ex.getCommandLine().getSubcommands().isEmpty()
        && !u.getUnmatched().isEmpty()
        && !u.getUnmatched().get(0).startsWith("-")) {
      return "unknown command '" + u.getUnmatched().get(0) + "'";
    }
    return oneLine(ex.getMessage());
  }

  /**
   * The message on one line, starting lower-case like the rest of Confine's messages (picocli
   * capitalises its own: "Unknown option: ...").
   */
  static String oneLine(String message) {
    String s = message == null ? "invalid command line" : message.strip();
    int nl = s.indexOf('\n');
    if (nl >= 0) {
      s = s.substring(0, nl).strip();
    }
    if (s.length() > 1
        && Character.isUpperCase(s.charAt(0))
        && Character.isLowerCase(s.charAt(1))) {
      s = Character.toLowerCase(s.charAt(0)) + s.substring(1);
    }
    return s;
  }
}
