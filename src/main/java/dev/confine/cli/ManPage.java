package dev.confine.cli;

import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * The manual page confine(1) in roff ({@code man(7)} macros), written from the command's picocli
 * model, so that the page and {@code --help} never disagree: the name and description of the
 * command, then a section per subcommand (its synopsis, description, arguments and options), the
 * exit statuses of {@link ExitStatus#HELP}, and the launcher's environment variables.
 */
final class ManPage {
  private ManPage() {}

  /** The page for {@code root} (the {@code confine} command with its subcommands). */
  static String render(CommandSpec root, String version) {
    StringBuilder b = new StringBuilder();
    b.append(".TH CONFINE 1 \"\" \"confine ")
        .append(escape(version))
        .append("\" \"User Commands\"\n");
    b.append(".SH NAME\nconfine \\- ").append(escape(first(root.usageMessage().description())));
    b.append("\n.SH SYNOPSIS\n");
    for (CommandSpec sub : subcommands(root)) {
      b.append("\\fBconfine ").append(sub.name()).append("\\fR ").append(synopsisTail(sub));
      b.append("\n.br\n");
    }
    b.append(".SH DESCRIPTION\n");
    paragraphs(b, root.usageMessage().description(), ".PP");
    for (CommandSpec sub : subcommands(root)) {
      b.append(".SH \"CONFINE ").append(sub.name().toUpperCase(Locale.ROOT)).append("\"\n");
      paragraphs(b, sub.usageMessage().description(), ".PP");
      for (PositionalParamSpec p : sub.positionalParameters()) {
        if (!p.hidden()) {
          b.append(".TP\n.I ").append(escape(p.paramLabel())).append('\n');
          paragraphs(b, p.description(), ".IP");
        }
      }
      for (OptionSpec o : sub.options()) {
        if (!o.hidden()) {
          b.append(".TP\n").append(optionLabel(o)).append('\n');
          paragraphs(b, o.description(), ".IP");
        }
      }
    }
    b.append(".SH \"EXIT STATUS\"\n.nf\n");
    for (String line : ExitStatus.HELP.formatted().lines().skip(1).toList()) {
      b.append(escape(line)).append('\n');
    }
    b.append(".fi\n");
    b.append(
        ".SH ENVIRONMENT\n"
            + ".TP\n.B CONFINE_JAVA_HOME\n"
            + "The JDK (22 or newer) to run with instead of the one confine was installed with.\n"
            + ".TP\n.B JAVA_HOME\n"
            + "Tried after the installed JDK; then the newest JDK under /usr/lib/jvm.\n"
            + ".TP\n.B CONFINE_JAVA_OPTS\n"
            + "More JVM options, after confine's own.\n");
    b.append(".SH \"SEE ALSO\"\n.BR env (1),\n.BR timeout (1),\n.BR bwrap (1)\n");
    return b.toString();
  }

  /** The visible subcommands, in the order they were added. */
  private static List<CommandSpec> subcommands(CommandSpec root) {
    return root.subcommands().values().stream()
        .map(c -> c.getCommandSpec())
        .filter(s -> !s.usageMessage().hidden())
        .toList();
  }

  /** What follows "confine NAME" in the synopsis: the custom synopsis's rest, or the arguments. */
  private static String synopsisTail(CommandSpec sub) {
    String[] custom = sub.usageMessage().customSynopsis();
    if (custom.length > 0) {
      String s = custom[0].strip();
      String prefix = "confine " + sub.name();
      return escape(s.startsWith(prefix) ? s.substring(prefix.length()).strip() : s);
    }
    StringBuilder t = new StringBuilder("[OPTIONS]");
    for (PositionalParamSpec p : sub.positionalParameters()) {
      if (!p.hidden()) {
        t.append(' ').append(p.arity().min() == 0 ? "[" + p.paramLabel() + "...]" : p.paramLabel());
      }
    }
    return escape(t.toString());
  }

  /** {@code \fB--name\fR, \fB-n\fR \fIPARAM\fR}. */
  private static String optionLabel(OptionSpec o) {
    StringBuilder s = new StringBuilder();
    for (String name : o.names()) {
      if (!s.isEmpty()) {
        s.append(", ");
      }
      s.append("\\fB").append(escape(name)).append("\\fR");
    }
    if (o.arity().max() > 0) {
      s.append(" \\fI").append(escape(o.paramLabel())).append("\\fR");
    }
    return s.toString();
  }

  private static String first(String[] lines) {
    return lines.length == 0 ? "" : lines[0];
  }

  /** Each line of {@code text} as a paragraph of its own, the next ones begun by {@code macro}. */
  private static void paragraphs(StringBuilder b, String[] text, String macro) {
    for (int i = 0; i < text.length; i++) {
      if (i > 0) {
        b.append(macro).append('\n');
      }
      b.append(escape(text[i])).append('\n');
    }
  }

  /**
   * {@code s} as roff text: a backslash is {@code \e}, a hyphen {@code \-} (so that options copy as
   * ASCII), and a line that would start with a control character is protected with {@code \&}.
   */
  static String escape(String s) {
    String t = s.replace("\\", "\\e").replace("-", "\\-");
    StringBuilder out = new StringBuilder();
    for (String line : t.split("\n", -1)) {
      if (!out.isEmpty()) {
        out.append('\n');
      }
      if (line.startsWith(".") || line.startsWith("'")) {
        out.append("\\&");
      }
      out.append(line);
    }
    return out.toString();
  }
}
