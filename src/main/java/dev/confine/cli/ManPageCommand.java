package dev.confine.cli;

import java.io.PrintStream;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code confine manpage}: prints confine(1) in roff, from the command's model ({@link ManPage});
 * {@code scripts/install} writes it to {@code share/man/man1/confine.1}. Hidden from the help.
 */
@Command(
    name = "manpage",
    hidden = true,
    description = "Prints the manual page confine(1), in roff (man -l - reads it).")
final class ManPageCommand implements Callable<Integer> {
  private final PrintStream out;

  @Spec private CommandSpec spec;

  ManPageCommand(PrintStream out) {
    this.out = Objects.requireNonNull(out, "out");
  }

  @Override
  public Integer call() {
    out.print(ManPage.render(spec.root(), Version.number()));
    out.flush();
    return 0;
  }
}
