package dev.confine.cli;

import java.io.ByteArrayInputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;

/**
 * The training run of the start-up cache ({@code scripts/install} and {@code scripts/confine} run
 * it once under {@code -XX:AOTCacheOutput}): the commands users run most, in one JVM, so that the
 * classes they load and link are in the cache. Their output goes nowhere; what they answer does not
 * matter, only the code they run.
 */
final class AotTraining {
  /**
   * The command lines trained on: a plain, capped, JSON, confined and proxied exec, doctor and
   * help.
   */
  static final List<List<String>> COMMANDS =
      List.of(
          List.of("exec", "--", "true"),
          List.of(
              "exec", "--json", "--memory", "64M", "--timeout", "10s", "--", "sh", "-c", "echo"),
          List.of("exec", "--confined", "--net", "deny", "--", "true"),
          // Starts an egress proxy (Netty, its transport, the connect supervisor where it runs).
          List.of(
              "exec",
              "--confined",
              "--net",
              "allow-list",
              "--allow-host",
              "127.0.0.1:9",
              "--",
              "true"),
          List.of("exec", "--clear-env", "--stdin-file", "/dev/null", "--", "true"),
          List.of("doctor"),
          List.of("doctor", "--confined"),
          List.of("--help"),
          List.of("exec", "--bogus"));

  private AotTraining() {}

  public static void main(String[] args) {
    PrintStream nowhere = new PrintStream(OutputStream.nullOutputStream());
    for (List<String> command : COMMANDS) {
      Main.run(
          command.toArray(String[]::new),
          new ByteArrayInputStream(new byte[0]),
          nowhere,
          nowhere,
          Main.BACKEND);
    }
  }
}
