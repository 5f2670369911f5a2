package dev.confine.cli;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Run by {@link StdinStreamTest} in a JVM with a 64 MiB heap: feeds {@code confine exec} stdin that
 * never ends, or that ends only far beyond the heap, and prints one line per scenario: the exit
 * status, how long the call took and the size of the child's output. Whatever goes wrong is
 * printed, an {@link OutOfMemoryError} included.
 */
final class StdinStreamProbe {
  private StdinStreamProbe() {}

  /** {@code yes}: "y\n" for ever. */
  static final class Endless extends InputStream {
    @Override
    public int read() {
      return 'y';
    }

    @Override
    public int read(byte[] b, int off, int len) {
      for (int i = 0; i < len; i++) {
        b[off + i] = (byte) (i % 2 == 0 ? 'y' : '\n');
      }
      return len;
    }
  }

  /** A pipe whose writer never writes nor closes: every read blocks for ever. */
  static final class Silent extends InputStream {
    private final CountDownLatch never = new CountDownLatch(1);

    @Override
    public int read() {
      try {
        never.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return -1;
    }
  }

  public static void main(String[] args) {
    String root = args[0];
    scenario(
        "endless-sleep", new Endless(), "--root", root, "--stdin-file", "-", "--", "sleep", "1");
    scenario(
        "devzero-head",
        new Endless(),
        "--root",
        root,
        "--stdin-file",
        "/dev/zero",
        "--",
        "head",
        "-c",
        "1000000");
    scenario(
        "silent-timeout",
        new Silent(),
        "--root",
        root,
        "--timeout",
        "1s",
        "--stdin-file",
        "-",
        "--",
        "cat");
    scenario(
        "endless-head",
        new Endless(),
        "--root",
        root,
        "--stdin-file",
        "-",
        "--",
        "head",
        "-c",
        "100000000");
  }

  private static void scenario(String name, InputStream in, String... execArgs) {
    String[] args = new String[execArgs.length + 1];
    args[0] = "exec";
    System.arraycopy(execArgs, 0, args, 1, execArgs.length);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    long start = System.nanoTime();
    String line;
    try {
      int status =
          Main.run(
              args,
              in,
              new PrintStream(out, true, StandardCharsets.UTF_8),
              new PrintStream(err, true, StandardCharsets.UTF_8),
              Main.BACKEND);
      line =
          "status="
              + status
              + " ms="
              + (System.nanoTime() - start) / 1_000_000
              + " out="
              + out.size()
              + " err="
              + err.toString(StandardCharsets.UTF_8).strip().replace('\n', '|');
    } catch (Throwable t) {
      line = "ERROR " + t;
    }
    System.out.println(name + " " + line);
    System.out.flush();
  }

  static List<String> names() {
    return List.of("endless-sleep", "devzero-head", "silent-timeout", "endless-head");
  }
}
