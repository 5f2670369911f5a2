package dev.confine.net;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Clients for proxy tests: curl (and other programs) as a child, and raw sockets. */
final class Clients {
  private Clients() {}

  /** A finished program: its status and output. */
  record Run(int status, String out, String err) {}

  /** Runs {@code command} (30 s at most) with {@code env} added to a clean environment. */
  static Run run(Map<String, String> env, String... command)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().keySet().removeIf(k -> k.toLowerCase(java.util.Locale.ROOT).contains("proxy"));
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    var out = new ByteArrayOutputStream();
    var err = new ByteArrayOutputStream();
    Thread t = Thread.ofPlatform().start(() -> copy(p.getErrorStream(), err));
    copy(p.getInputStream(), out);
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("timed out: " + String.join(" ", command));
    }
    t.join();
    return new Run(
        p.exitValue(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static Run curl(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("curl", "-sS", "--max-time", "20"));
    command.addAll(List.of(args));
    return run(Map.of(), command.toArray(String[]::new));
  }

  private static void copy(InputStream in, ByteArrayOutputStream out) {
    try (in) {
      in.transferTo(out);
    } catch (IOException e) {
      // the child went away: what was read is kept
    }
  }

  /** A raw TCP client: sends text, reads what comes back until the proxy closes or 10 s pass. */
  static String exchange(InetSocketAddress proxy, String request) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(proxy, 5000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(request.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }

  /** Basic proxy credentials carrying {@code token}. */
  static String proxyAuthorization(String token) {
    return "Proxy-Authorization: Basic "
        + java.util.Base64.getEncoder()
            .encodeToString(("confine:" + token).getBytes(StandardCharsets.UTF_8))
        + "\r\n";
  }
}
