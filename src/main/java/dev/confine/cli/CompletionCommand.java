package dev.confine.cli;

import java.io.PrintStream;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

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
final class CompletionCommand implements Callable<Integer> {
  private final PrintStream out;

  @Spec private CommandSpec spec;

  CompletionCommand(PrintStream out) {
    this.out = Objects.requireNonNull(out, "out");
  }

  @Override
  public Integer call() {
    out.print(AutoComplete.bash("confine", spec.root().commandLine()));
    out.flush();
    return 0;
  }
}
