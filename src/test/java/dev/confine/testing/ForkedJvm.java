package dev.confine.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class of the test class path in a JVM of its own, for tests whose subject could kill
 * or hang the JVM it runs in (a confined child attacking its parent, a cap that starves it).
 */
public final class ForkedJvm {
  private ForkedJvm() {}

  /**
   * How the forked JVM ended.
   *
   * @param exitCode its exit status (128+N when signal N killed it), or -1 when it was killed after
   *     the timeout
   * @param output its stdout and stderr, interleaved
   */
  public record Outcome(int exitCode, String output) {}

  /** Runs {@code mainClass} with {@code args} and waits for it, at most {@code timeout}. */
  public static Outcome run(Class<?> mainClass, Duration timeout, String... args)
      throws IOException, InterruptedException {
    List<String> arguments = new ArrayList<>();
    arguments.add("--enable-native-access=ALL-UNNAMED");
    arguments.add("-cp");
    arguments.add(System.getProperty("java.class.path"));
    arguments.add(mainClass.getName());
    arguments.addAll(List.of(args));
    return java(arguments, timeout);
  }

  /**
   * Runs this JVM's {@code java} with {@code arguments} (options, then what to run) and waits for
   * it, at most {@code timeout}; its stdin is closed.
   */
  public static Outcome java(List<String> arguments, Duration timeout)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(arguments);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getOutputStream().close();
    byte[][] out = new byte[1][];
    Thread reader =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    out[0] = p.getInputStream().readAllBytes();
                  } catch (IOException e) {
                    out[0] = ("reading the forked JVM's output failed: " + e).getBytes();
                  }
                });
    int code;
    if (p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      code = p.exitValue();
    } else {
      p.destroyForcibly();
      p.waitFor();
      code = -1;
    }
    reader.join();
    return new Outcome(code, new String(out[0], StandardCharsets.UTF_8));
  }
}
