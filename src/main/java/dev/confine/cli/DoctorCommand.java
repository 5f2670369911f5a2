package dev.confine.cli;

import dev.confine.local.HostCapability;
import dev.confine.local.LocalRunner;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code confine doctor}: what this host enforces, one row per policy dimension, with the mechanism
 * or the reason it does not.
 */
@Command(
    name = "doctor",
    mixinStandardHelpOptions = true,
    version = Main.VERSION,
    description =
        "Reports what the local backend enforces on this host: one row per policy dimension, with"
            + " the mechanism, or the reason where it cannot.")
final class DoctorCommand implements Callable<Integer> {
  private final PrintStream out;

  @Mixin private BackendOptions backend = new BackendOptions();

  @Option(names = "--json", description = "Print one JSON object instead of the table.")
  private boolean json;

  DoctorCommand(PrintStream out) {
    this.out = out;
  }

  @Override
  public Integer call() {
    LocalRunner runner =
        LocalRunner.builder(".").caps(backend.caps).cgroupParent(backend.cgroupParent).build();
    List<HostCapability> rows = runner.capabilities();
    String text = json ? json(rows) : table(rows);
    out.write(
        text.getBytes(StandardCharsets.UTF_8), 0, text.getBytes(StandardCharsets.UTF_8).length);
    out.flush();
    return 0;
  }

  static String table(List<HostCapability> rows) {
    int width = rows.stream().mapToInt(r -> r.dimension().length()).max().orElse(0);
    StringBuilder b = new StringBuilder();
    for (HostCapability r : rows) {
      b.append(
          String.format(
              "%-" + width + "s  %-3s  %s%n",
              r.dimension(),
              r.enforced() ? "yes" : "no",
              r.detail()));
    }
    return b.toString();
  }

  static String json(List<HostCapability> rows) {
    StringBuilder b = new StringBuilder("{\"dimensions\":[");
    for (int i = 0; i < rows.size(); i++) {
      HostCapability r = rows.get(i);
      b.append(i == 0 ? "" : ",").append("{\"dimension\":");
      JsonString.appendQuoted(b, r.dimension());
      b.append(",\"enforced\":").append(r.enforced()).append(",\"detail\":");
      JsonString.appendQuoted(b, r.detail());
      b.append('}');
    }
    return b.append("]}\n").toString();
  }
}
