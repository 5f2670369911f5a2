package dev.confine.cli;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.ResourceLimits;
import dev.confine.Runner;
import dev.confine.SandboxException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code confine exec}: turns the command line into {@link ExecOptions}, runs the command once and
 * reports the outcome, either as the child's own output and exit status or as one JSON object.
 */
@Command(
    name = "exec",
    mixinStandardHelpOptions = true,
    version = Main.VERSION,
    sortOptions = false,
    customSynopsis = "confine exec [OPTIONS] [--] CMD [ARGS...]",
    description = {
      "Runs CMD with ARGS under the policy the options describe, and exits with its status.",
      "Options end at CMD (or at '--'): everything from CMD on is passed to it verbatim,"
          + " without a shell.",
    },
    footer = {
      "",
      "Exit status (without --json):",
      "  N        CMD exited with status N",
      "  128+N    CMD was killed by signal N",
      "  124      the timeout expired",
      "  125      Confine failed or refused to run CMD",
      "  126      CMD cannot be run",
      "  127      CMD was not found",
      "  2        the command line is wrong",
      "With --json the status is 0 whenever the JSON was printed, 2 on a usage error.",
    })
final class ExecCommand implements Callable<Integer> {
  private final InputStream in;
  private final PrintStream out;
  private final PrintStream err;
  private final RunnerFactory factory;

  @Spec private CommandSpec spec;

  @Mixin private BackendOptions backend = new BackendOptions();

  @Option(
      names = "--root",
      paramLabel = "DIR",
      description = "The directory CMD is confined to (default: the current directory).")
  private String root;

  @Option(
      names = {"-C", "--workdir"},
      paramLabel = "DIR",
      description = "The working directory: relative to the root, or absolute inside it.")
  private String workDir;

  @Option(
      names = "--timeout",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "Kill CMD's whole process tree after DURATION (Go syntax: 10s, 1m30s, 250ms, 1.5h;"
              + " 0 = none, the default).")
  private Duration timeout;

  @Option(
      names = "--clear-env",
      description = "Inherit no environment variables (only --env-allow and --env ones).")
  private boolean clearEnv;

  @Option(
      names = "--env-allow",
      paramLabel = "NAME",
      description = "Inherit only these variables (repeatable).")
  private List<String> envAllow;

  @Option(
      names = "--env",
      paramLabel = "NAME=VALUE",
      description = "Set a variable in CMD's environment (repeatable; the last one wins).")
  private List<String> envSet;

  @Option(
      names = "--stdin-file",
      paramLabel = "FILE",
      description = {
        "Pipe the bytes of FILE to CMD's stdin; '-' reads all of this command's stdin first.",
        "Without it CMD's stdin is empty (it reads end of file at once): unlike env or timeout,"
            + " CMD never reads the terminal.",
      })
  private String stdinFile;

  @Option(
      names = "--max-output",
      paramLabel = "SIZE",
      converter = SizeConverter.class,
      description =
          "Keep at most SIZE bytes of each of stdout and stderr (1024, 64k, 1.5m, 2GiB, 10mb;"
              + " default: the backend's, 10 MiB).")
  private long maxOutput;

  @Option(
      names = "--memory",
      paramLabel = "SIZE",
      converter = SizeConverter.class,
      description = "Cap the memory of CMD's process tree.")
  private long memory;

  @Option(
      names = "--cpu-millicores",
      paramLabel = "N",
      converter = CountConverter.class,
      description = "Cap CPU time at N thousandths of a core over the timeout (needs --timeout).")
  private int cpuMillicores;

  @Option(
      names = "--net",
      paramLabel = "MODE",
      converter = NetConverter.class,
      description =
          "The network CMD may reach: default (the host's) or deny (none; needs --confined).")
  private NetMode net = NetMode.DEFAULT;

  @Option(
      names = "--max-processes",
      paramLabel = "N",
      converter = CountConverter.class,
      description = "Cap the processes and threads of CMD's tree.")
  private int maxProcesses;

  @Option(
      names = "--json",
      description =
          "Print one JSON object (exit_code, signal, stdout, stderr, stdout_truncated,"
              + " stderr_truncated, wall_ms, error) instead of CMD's output.")
  private boolean json;

  @Parameters(
      arity = "1..*",
      paramLabel = "CMD",
      description = "The program (looked up on PATH unless it holds '/') and its arguments.")
  private List<String> command;

  /**
   * A command reading stdin from {@code in} and writing to {@code out} and {@code err}, with the
   * runner that {@code factory} makes.
   */
  ExecCommand(InputStream in, PrintStream out, PrintStream err, RunnerFactory factory) {
    this.in = Objects.requireNonNull(in, "in");
    this.out = Objects.requireNonNull(out, "out");
    this.err = Objects.requireNonNull(err, "err");
    this.factory = Objects.requireNonNull(factory, "factory");
  }

  /**
   * Runs the command once and reports it.
   *
   * @return the exit status (see {@link ExitStatus}), or 0 after a JSON report
   * @throws ParameterException for input that is only found wrong now (an unreadable stdin file, a
   *     malformed {@code --env}), so that it is reported as a usage error
   */
  @Override
  public Integer call() {
    // Everything the user typed is checked before anything runs, so a typo is a usage error.
    String rootDir = rootDir();
    Map<String, String> inject = injectedEnv();
    byte[] stdin = stdin();

    Outcome outcome = run(rootDir, inject, stdin);
    if (json) {
      out.writeBytes((JsonOutput.of(outcome) + "\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
      return 0;
    }
    PlainOutput.write(outcome, out, err);
    return ExitStatus.of(outcome);
  }

  private Outcome run(String rootDir, Map<String, String> inject, byte[] stdin) {
    try {
      ExecOptions options =
          ExecOptions.builder()
              .workDir(workDir)
              .stdin(stdin)
              .timeout(timeout)
              .env(envPolicy(inject))
              .net(net == NetMode.DENY_ALL ? NetPolicy.denyAll() : NetPolicy.defaults())
              .resources(
                  ResourceLimits.builder()
                      .maxOutputBytes(maxOutput)
                      .memoryBytes(memory)
                      .cpuMillicores(cpuMillicores)
                      .maxProcesses(maxProcesses)
                      .build())
              .build();
      Runner runner = factory.create(rootDir, maxOutput, backend);
      return Outcome.of(runner.exec(command.get(0), command.subList(1, command.size()), options));
    } catch (SandboxException e) {
      return Outcome.of(e);
    } catch (RuntimeException e) {
      // A bug in a runner is still reported in the promised form, not as a stack trace.
      return Outcome.of(
          new SandboxException(SandboxException.Kind.INTERNAL, "internal error: " + e, e));
    }
  }

  private EnvPolicy envPolicy(Map<String, String> inject) {
    List<String> allow;
    if (envAllow != null) {
      allow = envAllow; // with or without --clear-env: exactly the list
    } else if (clearEnv) {
      allow = List.of();
    } else {
      allow = null; // inherit everything
    }
    return new EnvPolicy(allow, inject);
  }

  private String rootDir() {
    try {
      return (root == null ? Path.of("") : Path.of(root)).toAbsolutePath().toString();
    } catch (InvalidPathException e) {
      throw usage("invalid --root " + JsonString.quote(root) + ": " + e.getReason());
    }
  }

  private Map<String, String> injectedEnv() {
    Map<String, String> inject = new LinkedHashMap<>();
    if (envSet == null) {
      return inject;
    }
    for (String assignment : envSet) {
      int eq = assignment.indexOf('=');
      if (eq < 0) {
        throw usage("--env " + JsonString.quote(assignment) + " is not of the form NAME=VALUE");
      }
      if (eq == 0) {
        throw usage("--env " + JsonString.quote(assignment) + " has an empty NAME");
      }
      String name = assignment.substring(0, eq);
      inject.remove(name); // the last assignment wins, and comes last in the child's environment
      inject.put(name, assignment.substring(eq + 1));
    }
    return inject;
  }

  private byte[] stdin() {
    if (stdinFile == null) {
      return null;
    }
    try {
      return stdinFile.equals("-") ? in.readAllBytes() : Files.readAllBytes(Path.of(stdinFile));
    } catch (IOException | InvalidPathException e) {
      throw usage("cannot read --stdin-file " + JsonString.quote(stdinFile) + ": " + reason(e));
    }
  }

  private static String reason(Exception e) {
    return switch (e) {
      case NoSuchFileException x -> "no such file";
      case AccessDeniedException x -> "permission denied";
      case InvalidPathException x -> x.getReason();
      default -> e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    };
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  /** Converts {@code --timeout} values with {@link GoDuration}. */
  static final class DurationConverter implements ITypeConverter<Duration> {
    /** The parsed duration; picocli reports the message of a bad one as a usage error. */
    @Override
    public Duration convert(String value) {
      try {
        return GoDuration.parse(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /** Converts size values with {@link ByteSize}. */
  static final class SizeConverter implements ITypeConverter<Long> {
    /** The parsed size in bytes; picocli reports the message of a bad one as a usage error. */
    @Override
    public Long convert(String value) {
      try {
        return ByteSize.parse(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /** Converts counts: whole numbers from 0 up to {@link Integer#MAX_VALUE}. */
  static final class CountConverter implements ITypeConverter<Integer> {
    /** The parsed count; picocli reports the message of a bad one as a usage error. */
    @Override
    public Integer convert(String value) {
      int n;
      try {
        n = Integer.parseInt(value);
      } catch (NumberFormatException e) {
        throw new TypeConversionException(
            JsonString.quote(value) + " is not a whole number up to " + Integer.MAX_VALUE);
      }
      if (n < 0) {
        throw new TypeConversionException(JsonString.quote(value) + " must not be negative");
      }
      return n;
    }
  }

  /** Parses default and deny. */
  static final class NetConverter implements ITypeConverter<NetMode> {
    @Override
    public NetMode convert(String value) {
      return switch (value) {
        case "default" -> NetMode.DEFAULT;
        case "deny" -> NetMode.DENY_ALL;
        default ->
            throw new IllegalArgumentException(
                "unknown network mode \"" + value + "\" (use default or deny)");
      };
    }
  }
}
