package dev.confine.net;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The proxy of Anthropic's sandbox-runtime, started by {@code jmh/peers/srt-proxy.mjs} in a Node
 * process of its own, allowing 127.0.0.1 only. Needs the system properties {@code
 * confine.bench.srtPackage} (the installed package's directory) and {@code confine.bench.srtScript}
 * (the script), and optionally {@code confine.bench.node}; {@code scripts/bench} sets them.
 */
final class SrtProxy implements AutoCloseable {
  private final Process node;
  private final InetSocketAddress address;

  /**
   * @param mode {@code mux} (as srt runs it: its single-port front-end, HTTP piped on to its HTTP
   *     server over a unix socket) or {@code http} (its HTTP server alone on a TCP port)
   */
  SrtProxy(String mode) throws IOException {
    String pkg = System.getProperty("confine.bench.srtPackage");
    String script = System.getProperty("confine.bench.srtScript");
    if (pkg == null || script == null || !Files.isDirectory(Path.of(pkg))) {
      throw new IllegalStateException(
          "srt is not installed (confine.bench.srtPackage, confine.bench.srtScript unset or"
              + " missing): run scripts/bench --proxy");
    }
    node =
        new ProcessBuilder(System.getProperty("confine.bench.node", "node"), script, pkg, mode)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    if (line == null || !line.startsWith("listening ")) {
      node.destroyForcibly();
      throw new IllegalStateException("srt's proxy did not start: " + line);
    }
    address =
        new InetSocketAddress(
            InetAddress.getLoopbackAddress(), Integer.parseInt(line.substring(10).strip()));
  }

  /** Whether the properties naming srt are set. */
  static boolean configured() {
    String pkg = System.getProperty("confine.bench.srtPackage");
    return pkg != null
        && System.getProperty("confine.bench.srtScript") != null
        && Files.isDirectory(Path.of(pkg));
  }

  InetSocketAddress address() {
    return address;
  }

  @Override
  public void close() throws IOException {
    node.getOutputStream().close();
    try {
      if (!node.waitFor(5, TimeUnit.SECONDS)) {
        node.destroyForcibly();
      }
    } catch (InterruptedException e) {
      node.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
