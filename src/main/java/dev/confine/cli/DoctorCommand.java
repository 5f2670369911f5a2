package dev.confine.cli;

import dev.confine.Capability;
import dev.confine.SandboxException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code confine doctor}: what this host enforces, one row per policy dimension, with the mechanism
 * or the reason it does not; with {@code --confined} (and {@code --rootless}, {@code
 * --read-only-host}), what the confined runner enforces.
 */
@Command(
    name = "doctor",
    mixinStandardHelpOptions = true,
    versionProvider = Version.class,
    description =
        "Reports what the local backend (with --confined: the confined runner; with --bwrap:"
            + " the bubblewrap runner) enforces on this host: one row per policy dimension, with"
            + " the mechanism, or the reason where it cannot.")
final class DoctorCommand implements Callable<Integer> {
  private final PrintStream out;
  private final RunnerFactory factory;

  @Mixin private BackendOptions backend = new BackendOptions();

  @Option(names = "--json", description = "Print one JSON object instead of the table.")
  private boolean json;

  /** A command that reports on the runner {@code factory} makes, as exec and shell run on it. */
  DoctorCommand(PrintStream out, RunnerFactory factory) {
    this.out = out;
    this.factory = Objects.requireNonNull(factory, "factory");
  }

  @Spec private CommandSpec spec;

  @Override
  public Integer call() {
    backend.validate(spec);
    List<Capability> rows;
    try {
      String here = Path.of("").toAbsolutePath().toString();
      rows = Capability.rowsOf(factory.create(here, 0, backend));
    } catch (SandboxException e) {
      // A runner these options cannot make (a cgroup parent that cannot apply, ...): refused.
      PrintWriter err = spec.commandLine().getErr();
      err.println("confine: " + e.getMessage());
      err.flush();
      return ExitStatus.CONFINE_FAILED;
    }
    String text = json ? json(rows) : table(rows);
    out.write(
        text.getBytes(StandardCharsets.UTF_8), 0, text.getBytes(StandardCharsets.UTF_8).length);
    out.flush();
    return 0;
  }

  static String table(List<Capability> rows) {
    int width = rows.stream().mapToInt(r -> r.dimension().label().length()).max().orElse(0);
    StringBuilder b = new StringBuilder();
    for (Capability r : rows) {
      b.append(
          String.format(
              "%-" + width + "s  %-3s  %s%n",
              r.dimension().label(),
              r.enforced() ? "yes" : "no",
              r.detail()));
    }
    return b.toString();
  }

  static String json(List<Capability> rows) {
    StringBuilder b = new StringBuilder("{\"dimensions\":[");
    for (int i = 0; i < rows.size(); i++) {
      Capability r = rows.get(i);
      b.append(i == 0 ? "" : ",").append("{\"dimension\":");
      JsonString.appendQuoted(b, r.dimension().label());
      b.append(",\"enforced\":").append(r.enforced()).append(",\"detail\":");
      JsonString.appendQuoted(b, r.detail());
      b.append('}');
    }
    return b.append("]}\n").toString();
  }
}
