package dev.confine.cli;

import java.io.PrintStream;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** A subcommand that prints a text made from the whole command's model, and exits 0. */
abstract class PrintingCommand implements Callable<Integer> {
  private final PrintStream out;

  @Spec private CommandSpec spec;

  PrintingCommand(PrintStream out) {
    this.out = Objects.requireNonNull(out, "out");
  }

  /** The text, from {@code root}: the {@code confine} command with its subcommands. */
  abstract String text(CommandSpec root);

  @Override
  public Integer call() {
    out.print(text(spec.root()));
    out.flush();
    return 0;
  }
}
