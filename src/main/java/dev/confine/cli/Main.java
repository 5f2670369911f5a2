package dev.confine.cli;

import dev.confine.Runner;
import dev.confine.bwrap.BwrapRunner;
import dev.confine.confined.ConfinedRunner;
import dev.confine.local.LocalRunner;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import picocli.CommandLine;

/**
 * The {@code confine} command: {@code confine exec [OPTIONS] [--] CMD [ARGS...]}, {@code confine
 * shell [OPTIONS] [--] [CMD [ARGS...]]}, {@code confine doctor}, {@code confine proxy} and {@code
 * confine completion}.
 */
public final class Main {
  /**
   * The backend of this binary: a {@link BwrapRunner} or a {@link ConfinedRunner} when the options
   * ask for one, else a {@link LocalRunner}. A default cap of zero or less keeps the runner's own
   * default (10 MiB).
   */
  static final RunnerFactory BACKEND =
      new RunnerFactory() {
        @Override
        public Runner create(String root, long maxOutputBytes) {
          return create(root, maxOutputBytes, new BackendOptions());
        }

        @Override
        public Runner create(String root, long maxOutputBytes, BackendOptions backend) {
          if (backend.bwrap) {
            BwrapRunner.Builder w = backend.bwrapBuilder(root);
            if (maxOutputBytes > 0) {
              w.maxOutputBytes(maxOutputBytes);
            }
            return w.build();
          }
          if (backend.confined) {
            ConfinedRunner.Builder c = backend.confinedBuilder(root);
            if (maxOutputBytes > 0) {
              c.maxOutputBytes(maxOutputBytes);
            }
            return c.build();
          }
          LocalRunner.Builder b =
              LocalRunner.builder(root).caps(backend.caps).cgroupParent(backend.cgroupParent);
          if (maxOutputBytes > 0) {
            b.maxOutputBytes(maxOutputBytes);
          }
          return b.build();
        }
      };

  /** The subcommands built alone when named first; any other first word builds them all. */
  private static final Set<String> SUBCOMMANDS = Set.of("exec", "shell", "doctor", "proxy");

  private Main() {}

  /**
   * Runs {@code confine} with {@code args} on the process's own streams and exits with its status.
   * The arguments are taken with their exact bytes where the process's raw argument vector can be
   * read ({@link RawArguments}), so that CMD, ARGS, {@code --env} values and {@code -C} reach the
   * child verbatim, bytes that are not UTF-8 included, whatever the locale.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    System.exit(run(RawArguments.of(args), System.in, System.out, System.err, BACKEND));
  }

  /**
   * Runs {@code confine} with {@code args} and returns its exit status: the whole command minus the
   * process exit, so tests can drive it with their own streams and runner.
   */
  static int run(
      String[] args, InputStream in, PrintStream out, PrintStream err, RunnerFactory factory) {
    CommandLine cli = new CommandLine(new ConfineCommand());
    // Only the subcommand named is built when one is (picocli reads each one's annotations
    // reflectively, a cost every run pays at start-up); all of them for help, suggestions and
    // errors.
    String named = args.length > 0 ? args[0] : "";
    if (named.equals("exec") || !SUBCOMMANDS.contains(named)) {
      cli.addSubcommand(new CommandLine(new ExecCommand(in, out, err, factory)));
    }
    if (named.equals("shell") || !SUBCOMMANDS.contains(named)) {
      cli.addSubcommand(new CommandLine(new ShellCommand(in, out, err, factory)));
    }
    if (named.equals("doctor") || !SUBCOMMANDS.contains(named)) {
      cli.addSubcommand(new CommandLine(new DoctorCommand(out, factory)));
    }
    if (named.equals("proxy") || !SUBCOMMANDS.contains(named)) {
      cli.addSubcommand(new CommandLine(new ProxyCommand(out, err)));
    }
    if (!SUBCOMMANDS.contains(named)) {
      cli.addSubcommand(new CommandLine(new CompletionCommand(out)));
      cli.addSubcommand(new CommandLine(new ManPageCommand(out)));
    }
    // Settings after addSubcommand, since picocli copies them to the subcommands present now.
    PrintWriter outWriter = utf8(out);
    PrintWriter errWriter = utf8(err);
    cli.setOut(outWriter);
    cli.setErr(errWriter);
    // "@file" is an argument like any other for CMD; picocli would read the file instead.
    cli.setExpandAtFiles(false);
    cli.setParameterExceptionHandler(new UsageErrorHandler());
    cli.setExecutionExceptionHandler(
        (ex, cmd, parseResult) -> {
          cmd.getErr().println("confine: internal error: " + ex);
          cmd.getErr().flush();
          return ExitStatus.CONFINE_FAILED;
        });
    // Like env and timeout: the first non-option starts CMD, so "confine exec ls -la" works too.
    for (String name : List.of("exec", "shell")) {
      CommandLine sub = cli.getSubcommands().get(name);
      if (sub != null) {
        sub.setStopAtPositional(true);
      }
    }
    try {
      return cli.execute(args);
    } finally {
      outWriter.flush();
      errWriter.flush();
    }
  }

  private static PrintWriter utf8(PrintStream stream) {
    return new PrintWriter(new OutputStreamWriter(stream, StandardCharsets.UTF_8), true);
  }
}
