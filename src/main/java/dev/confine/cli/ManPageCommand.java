package dev.confine.cli;

import java.io.PrintStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code confine manpage}: prints confine(1) in roff, from the command's model ({@link ManPage});
 * {@code scripts/install} writes it to {@code share/man/man1/confine.1}. Hidden from the help.
 */
@Command(
    name = "manpage",
    hidden = true,
    description = "Prints the manual page confine(1), in roff (man -l - reads it).")
final class ManPageCommand extends PrintingCommand {
  ManPageCommand(PrintStream out) {
    super(out);
  }

  @Override
  String text(CommandSpec root) {
    return ManPage.render(root, Version.number());
  }
}
