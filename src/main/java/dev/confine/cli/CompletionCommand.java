package dev.confine.cli;

import java.io.PrintStream;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code confine completion}: prints the bash completion script of the whole command, generated
 * from its picocli model (zsh loads it through {@code bashcompinit}).
 */
@Command(
    name = "completion",
    mixinStandardHelpOptions = true,
    versionProvider = Version.class,
    description = {
      "Prints a bash completion script for confine (zsh: load it after 'autoload -U +X"
          + " bashcompinit && bashcompinit').",
      "For example: source <(confine completion)",
    })
final class CompletionCommand extends PrintingCommand {
  CompletionCommand(PrintStream out) {
    super(out);
  }

  @Override
  String text(CommandSpec root) {
    return AutoComplete.bash("confine", root.commandLine());
  }
}
