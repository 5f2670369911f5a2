package dev.confine.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What the calling thread may do, for tests that check a thread is not confined. */
public final class CallingThread {
  private CallingThread() {}

  /**
   * Its seccomp and no_new_privs state, whether its network and mount namespaces are the process's,
   * and whether it can listen on loopback: {@code "NoNewPrivs:0 Seccomp:0 net=host mnt=host
   * inet=ok"} for a thread nothing confines.
   */
  public static String confinement() throws IOException {
    StringBuilder s = new StringBuilder();
    for (String line : Files.readAllLines(Path.of("/proc/thread-self/status"))) {
      if (line.startsWith("Seccomp:") || line.startsWith("NoNewPrivs:")) {
        s.append(line.replaceAll("\\s+", "")).append(' ');
      }
    }
    for (String ns : List.of("net", "mnt")) {
      boolean host =
          Files.readSymbolicLink(Path.of("/proc/thread-self/ns/" + ns))
              .equals(Files.readSymbolicLink(Path.of("/proc/self/ns/" + ns)));
      s.append(ns).append(host ? "=host " : "=other ");
    }
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      s.append(server.getLocalPort() > 0 ? "inet=ok" : "inet=no port");
    } catch (IOException e) {
      s.append("inet=").append(e.getMessage());
    }
    return s.toString();
  }
}
