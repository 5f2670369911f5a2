package dev.confine.cli;

import dev.confine.ExecOptions;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.host.HostExec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code confine exec}: turns the command line into {@link ExecOptions}, runs the command once and
 * reports the outcome, either as the child's own output and exit status or as one JSON object.
 */
@Command(
    name = "exec",
    mixinStandardHelpOptions = true,
    versionProvider = Version.class,
    sortOptions = false,
    customSynopsis = "confine exec [OPTIONS] [--] CMD [ARGS...]",
    description = {
      "Runs CMD with ARGS under the policy the options describe, and exits with its status.",
      "Options end at CMD (or at '--'): everything from CMD on is passed to it verbatim,"
          + " without a shell.",
    },
    footer = {"", ExitStatus.HELP})
final class ExecCommand implements Callable<Integer> {
  private final InputStream in;
  private final PrintStream out;
  private final PrintStream err;
  private final RunnerFactory factory;

  @Spec private CommandSpec spec;

  @Mixin private PolicyOptions policy = new PolicyOptions();

  @Mixin private BackendOptions backend = new BackendOptions();

  @Option(
      names = "--stdin-file",
      paramLabel = "FILE",
      description = {
        "Pipe FILE into CMD's stdin while CMD runs ('-' = this command's stdin); it is never"
            + " read whole first, so CMD starts at once and FILE may be endless (/dev/zero, a pipe).",
        "Without it CMD's stdin is empty (it reads end of file at once): unlike env or timeout,"
            + " CMD never reads the terminal.",
      })
  private String stdinFile;

  @Option(
      names = "--json",
      description =
          "Print one JSON object (exit_code, signal, stdout, stderr, stdout_truncated,"
              + " stderr_truncated, wall_ms, child_ms, error, usage) instead of CMD's output.")
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
    backend.validate(spec);
    backend.auditStderr = err;
    String rootDir = policy.rootDir(spec);
    InputStream stdin = stdin();
    ExecOptions options = policy.options(spec, stdin);
    if (!json) {
      // Like env or timeout: CMD's output reaches ours as it writes it (capped all the same).
      options =
          options.toBuilder()
              .stdoutStream(new Reporting(out))
              .stderrStream(new Reporting(err))
              .build();
    }

    Outcome outcome;
    try {
      outcome = run(rootDir, options);
    } finally {
      if (stdin instanceof StdinFile file) {
        file.close();
      }
    }
    if (json) {
      JsonOutput.write(outcome, out);
      return 0;
    }
    long cap = policy.maxOutput() > 0 ? policy.maxOutput() : HostExec.DEFAULT_MAX_OUTPUT_BYTES;
    PlainOutput.write(outcome, out, err, cap);
    return ExitStatus.of(outcome);
  }

  private Outcome run(String rootDir, ExecOptions options) {
    try {
      Runner runner = factory.create(rootDir, policy.maxOutput(), backend);
      try {
        return Outcome.of(runner.exec(command.get(0), command.subList(1, command.size()), options));
      } finally {
        if (runner instanceof AutoCloseable closeable) {
          closeQuietly(closeable);
        }
      }
    } catch (SandboxException e) {
      return Outcome.of(e);
    } catch (RuntimeException e) {
      // A bug in a runner is still reported in the promised form, not as a stack trace.
      return Outcome.of(
          new SandboxException(SandboxException.Kind.INTERNAL, "internal error: " + e, e));
    }
  }

  /** Releases what the runner holds (a confined runner's egress proxies). */
  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception e) {
      // The exec's outcome is what the caller needs; the process exits next anyway.
    }
  }

  /**
   * The stream for {@code --stdin-file}: our own stdin for "-", else the file, checked now (so that
   * a typo is a usage error) and opened on its first read by the exec's stdin thread, so that a
   * FIFO whose writer comes later does not hold the child back.
   */
  private InputStream stdin() {
    if (stdinFile == null) {
      return null;
    }
    if (stdinFile.equals("-")) {
      return in;
    }
    String why;
    Path file;
    try {
      file = Path.of(stdinFile);
      why =
          !Files.exists(file)
              ? "no such file"
              : Files.isDirectory(file)
                  ? "is a directory"
                  : !Files.isReadable(file) ? "permission denied" : null;
    } catch (InvalidPathException e) {
      why = e.getReason();
      file = null;
    }
    if (why != null) {
      throw usage("cannot read --stdin-file " + JsonString.quote(stdinFile) + ": " + why);
    }
    return new StdinFile(file);
  }

  /** A file opened on its first read; its reads are interruptible (a FileChannel's stream). */
  private static final class StdinFile extends InputStream {
    private final Path file;
    private InputStream opened;
    private boolean closed;

    StdinFile(Path file) {
      this.file = file;
    }

    private synchronized InputStream stream() throws IOException {
      if (closed) {
        throw new IOException("closed");
      }
      if (opened == null) {
        opened = Files.newInputStream(file);
      }
      return opened;
    }

    @Override
    public int read() throws IOException {
      return stream().read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return stream().read(b, off, len);
    }

    @Override
    public void close() {
      InputStream s;
      synchronized (this) {
        closed = true;
        s = opened;
      }
      if (s != null) {
        try {
          s.close();
        } catch (IOException e) {
          // Nothing was written to it: a failed close of an input loses nothing.
        }
      }
    }
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  /**
   * One of our own streams as the exec's output stream: a {@link PrintStream} only sets a flag when
   * a write fails (stdout piped into a program that has exited), which this turns back into the
   * {@link IOException} that ends the streaming, so that CMD's next write fails as it would writing
   * to that pipe itself.
   */
  private static final class Reporting extends OutputStream {
    private final PrintStream stream;

    Reporting(PrintStream stream) {
      this.stream = stream;
    }

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      stream.write(b, off, len);
      flush();
    }

    @Override
    public void flush() throws IOException {
      if (stream.checkError()) { // flushes, then tells whether any write or flush failed
        throw new IOException("write error");
      }
    }
  }
}
