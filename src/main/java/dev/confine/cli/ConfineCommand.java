package dev.confine.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The top-level {@code confine} command, which only dispatches to its subcommands. Run alone it is
 * a usage error: there is nothing sensible to do without a subcommand.
 */
@Command(
    name = "confine",
    mixinStandardHelpOptions = true,
    versionProvider = Version.class,
    description = "Runs commands under an enforced policy.",
    synopsisSubcommandLabel = "COMMAND",
    footer = {"", ExitStatus.HELP})
final class ConfineCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  /** Prints the usage on stderr and returns {@link ExitStatus#USAGE}. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    spec.commandLine().getErr().flush();
    return ExitStatus.USAGE;
  }
}
