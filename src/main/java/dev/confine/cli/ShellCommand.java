package dev.confine.cli;

import dev.confine.ExecOptions;
import dev.confine.Runner;
import dev.confine.SandboxException;
import dev.confine.linux.spawn.Pty;
import dev.confine.linux.spawn.TerminalMode;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.session.OutputRead;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessManager;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code confine shell}: attaches the user's terminal to a PTY session running a shell (or CMD)
 * under the policy the options describe, and exits with its status. The user's terminal is in raw
 * mode while the session runs, so every key (Ctrl-C included) reaches the session's terminal; it is
 * restored on every way out, including a SIGTERM to Confine.
 */
@Command(
    name = "shell",
    mixinStandardHelpOptions = true,
    versionProvider = Version.class,
    sortOptions = false,
    customSynopsis = "confine shell [OPTIONS] [--] [CMD [ARGS...]]",
    description = {
      "Runs CMD (default: $SHELL, else /bin/sh) on a new terminal under the policy the options"
          + " describe, attached to this terminal, and exits with its status.",
      "Window size changes are passed on. Options end at CMD (or at '--').",
    },
    footer = {"", ExitStatus.HELP})
final class ShellCommand implements Callable<Integer> {
  private static final int RESIZE_POLL_MILLIS = 100;
  private static final int IN_FD = 0;

  private final InputStream in;
  private final PrintStream out;
  private final PrintStream err;
  private final RunnerFactory factory;

  @Spec private CommandSpec spec;

  @Mixin private PolicyOptions policy = new PolicyOptions();

  @Mixin private BackendOptions backend = new BackendOptions();

  @Parameters(arity = "0..*", paramLabel = "CMD", description = "The program and its arguments.")
  private List<String> command;

  ShellCommand(InputStream in, PrintStream out, PrintStream err, RunnerFactory factory) {
    this.in = Objects.requireNonNull(in, "in");
    this.out = Objects.requireNonNull(out, "out");
    this.err = Objects.requireNonNull(err, "err");
    this.factory = Objects.requireNonNull(factory, "factory");
  }

  @Override
  public Integer call() {
    backend.validate(spec);
    backend.auditStderr = err;
    String rootDir = policy.rootDir(spec);
    ExecOptions options = policy.options(spec, null);
    List<String> argv = command == null || command.isEmpty() ? List.of(defaultShell()) : command;
    // Only a real terminal on our stdin is put in raw mode and followed for its size; piped input
    // still drives the session, which is what scripts and tests use.
    boolean attached = in == System.in && Pty.isTerminal(IN_FD);
    int[] size = attached ? terminalSize() : new int[] {0, 0};
    ProcessSession session;
    try {
      Runner runner = factory.create(rootDir, policy.maxOutput(), backend);
      ProcessManager manager =
          ProcessManager.of(runner)
              .orElseThrow(
                  () ->
                      new SandboxException(
                          SandboxException.Kind.NOT_AVAILABLE,
                          "confine: this backend has no interactive sessions"));
      session = manager.start(new ProcessSpec(null, argv, true, size[0], size[1], options));
    } catch (SandboxException e) {
      PlainOutput.note(err, e.getMessage());
      err.flush();
      return ExitStatus.of(e.kind());
    }
    TerminalMode raw = attached ? TerminalMode.raw(IN_FD) : null;
    Thread restore = raw == null ? null : new Thread(raw::close, "confine-restore-terminal");
    if (restore != null) {
      Runtime.getRuntime().addShutdownHook(restore);
    }
    try (session) {
      startDaemon("confine-shell-input", () -> pumpInput(session));
      if (attached) {
        startDaemon("confine-shell-resize", () -> followSize(session, size));
      }
      pumpOutput(session);
      return status(session.waitFor());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return ExitStatus.CONFINE_FAILED;
    } finally {
      if (raw != null) {
        raw.close();
        try {
          Runtime.getRuntime().removeShutdownHook(restore);
        } catch (IllegalStateException e) {
          // already shutting down: the hook restores the terminal (again, harmlessly)
        }
      }
    }
  }

  private static String defaultShell() {
    String shell = System.getenv("SHELL");
    return shell == null || shell.isEmpty() ? "/bin/sh" : shell;
  }

  private static int[] terminalSize() {
    try {
      return Pty.size(IN_FD);
    } catch (ErrnoException e) {
      return new int[] {0, 0};
    }
  }

  private static void startDaemon(String name, Runnable task) {
    Thread.ofPlatform().name(name).daemon().start(task);
  }

  private void pumpOutput(ProcessSession session) throws InterruptedException {
    ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
    long cursor = 0;
    while (true) {
      OutputRead r = session.read(cursor, buf.clear());
      out.write(buf.array(), 0, r.length());
      out.flush();
      cursor = r.nextSeq();
      if (r.eof()) {
        return;
      }
    }
  }

  private void pumpInput(ProcessSession session) {
    byte[] buf = new byte[4096];
    try {
      int n;
      while ((n = in.read(buf)) >= 0) {
        if (n > 0) {
          session.write(Arrays.copyOf(buf, n));
        }
      }
      session.closeStdin(); // end of our input: the terminal's end-of-file character
    } catch (IOException | SandboxException e) {
      // the session ended or was closed: nothing more to pass on
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void followSize(ProcessSession session, int[] initial) {
    // Polled: catching SIGWINCH needs sun.misc.Signal, whose use javac flags with a warning that
    // cannot be suppressed (and this build fails on warnings); one ioctl per 100 ms costs nothing.
    int[] last = initial;
    try {
      while (true) {
        Thread.sleep(RESIZE_POLL_MILLIS);
        int[] now = terminalSize();
        if (now[0] > 0 && now[1] > 0 && !Arrays.equals(now, last)) {
          session.resize(now[0], now[1]);
          last = now;
        }
      }
    } catch (InterruptedException | SandboxException e) {
      // the session ended
    }
  }

  private int status(ProcessExit exit) {
    if (exit.error() != null) {
      PlainOutput.note(err, exit.error().getMessage());
      err.flush();
      return ExitStatus.of(exit.error().kind());
    }
    return exit.signal() != 0 ? 128 + exit.signal() : exit.code();
  }
}
