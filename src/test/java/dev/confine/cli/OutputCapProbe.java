package dev.confine.cli;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.local.LocalRunner;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Run by {@link OutputCapMemoryTest} in a JVM with a small heap: captures output at and beyond what
 * that heap can hold, through the library and the CLI, and prints one line per scenario. Whatever
 * goes wrong is printed, an {@link OutOfMemoryError} included, so the test can see it.
 */
final class OutputCapProbe {
  private OutputCapProbe() {}

  /** The capture limit this JVM should have, computed independently of the code under test. */
  static long limit() {
    return Math.min(Integer.MAX_VALUE - 8, Runtime.getRuntime().maxMemory() / 8);
  }

  public static void main(String[] args) {
    String root = args[0];
    for (String scenario :
        List.of("unlimited", "both", "json", "refused", "streamed-big", "concurrent", "default")) {
      try {
        System.out.println(scenario + " " + run(scenario, root));
      } catch (Throwable t) {
        System.out.println(scenario + " ERROR " + t);
      }
      System.out.flush();
    }
  }

  private static String run(String scenario, String root) throws Exception {
    long l = limit();
    return switch (scenario) {
      case "unlimited" -> {
        ExecResult r =
            LocalRunner.builder(root)
                .maxOutputBytes(0)
                .build()
                .exec("head", List.of("-c", Long.toString(3 * l), "/dev/zero"), null);
        yield "kept=" + r.stdoutLength() + " truncated=" + r.stdoutTruncated();
      }
      case "both" -> {
        ExecResult r = bothStreams(LocalRunner.create(root), l);
        yield "kept=" + r.stdoutLength() + "," + r.stderrLength();
      }
      case "json" -> {
        CountingStream out = new CountingStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        // NUL bytes are the worst case for JSON: six characters each.
        int status =
            Main.run(
                new String[] {
                  "exec",
                  "--json",
                  "--max-output",
                  Long.toString(l),
                  "--",
                  "head",
                  "-c",
                  Long.toString(l),
                  "/dev/zero"
                },
                new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, false, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                Main.BACKEND);
        yield "status="
            + status
            + " bytes="
            + out.count
            + " head="
            + out.head()
            + " err="
            + err.toString(StandardCharsets.UTF_8).strip();
      }
      case "refused" -> {
        // Captured (--json), 8 GiB per stream cannot be held: refused, in the JSON's error.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status =
            Main.run(
                new String[] {"exec", "--json", "--root", root, "--max-output", "8g", "--", "true"},
                new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                Main.BACKEND);
        yield "status=" + status + " out=" + out.toString(StandardCharsets.UTF_8).strip();
      }
      case "streamed-big" -> {
        // Streamed (no --json), the same cap needs no heap: it runs.
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status =
            Main.run(
                new String[] {"exec", "--root", root, "--max-output", "8g", "--", "echo", "hi"},
                new ByteArrayInputStream(new byte[0]),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                Main.BACKEND);
        yield "status=" + status + " err=" + err.toString(StandardCharsets.UTF_8).strip();
      }
      case "concurrent" -> {
        // More than the heap holds at once: each exec must either hold its output or fail cleanly.
        LocalRunner runner = LocalRunner.create(root);
        ConcurrentLinkedQueue<String> outcomes = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
          threads.add(
              Thread.ofVirtual()
                  .start(
                      () -> {
                        try {
                          ExecResult r = bothStreams(runner, l);
                          outcomes.add(
                              r.stdoutLength() == l && r.stderrLength() == l ? "ok" : "short");
                        } catch (SandboxException e) {
                          outcomes.add(e.kind().name());
                        } catch (Throwable t) {
                          outcomes.add("ERROR " + t);
                        }
                      }));
        }
        for (Thread t : threads) {
          t.join();
        }
        yield "outcomes=" + outcomes;
      }
      case "default" -> {
        // The built-in 10 MiB is more than this heap captures, but streamed output is not held:
        // all 10 MiB are written, and the rest is cut.
        CountingStream out = new CountingStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status =
            Main.run(
                new String[] {"exec", "--root", root, "--", "head", "-c", "20m", "/dev/zero"},
                new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, false, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                Main.BACKEND);
        yield "status="
            + status
            + " bytes="
            + out.count
            + " err="
            + err.toString(StandardCharsets.UTF_8).strip();
      }
      default -> throw new IllegalArgumentException(scenario);
    };
  }

  private static ExecResult bothStreams(LocalRunner runner, long l) {
    String n = Long.toString(l + 1000);
    return runner.exec(
        "sh",
        List.of("-c", "head -c " + n + " /dev/zero; head -c " + n + " /dev/zero >&2"),
        ExecOptions.builder()
            .resources(ResourceLimits.builder().maxOutputBytes(l).build())
            .build());
  }

  /** Counts what is written and keeps its first bytes. */
  private static final class CountingStream extends OutputStream {
    long count;
    final byte[] start = new byte[64];

    @Override
    public void write(int b) {
      if (count < start.length) {
        start[(int) count] = (byte) b;
      }
      count++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      for (int i = 0; i < len && count + i < start.length; i++) {
        start[(int) (count + i)] = b[off + i];
      }
      count += len;
    }

    String head() {
      return new String(start, 0, (int) Math.min(count, start.length), StandardCharsets.UTF_8);
    }
  }
}
