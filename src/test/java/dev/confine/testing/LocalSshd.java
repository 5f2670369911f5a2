package dev.confine.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A real SSH server for tests: Debian's openssh-server ({@code /usr/sbin/sshd}), started in the
 * foreground on 127.0.0.1 on a free ephemeral port with a fresh ed25519 host key, its configuration
 * and log in a private temporary directory (see {@link LoopbackServer}). It lets nobody log in (no
 * user has a key or password for it): tests use it to see that an SSH client reaches it, by its
 * banner and host key ({@code ssh-keyscan}). As root it needs {@code /run/sshd} (privilege
 * separation), which it makes when missing. A host without openssh-server skips the test.
 */
public final class LocalSshd implements AutoCloseable {
  private static final String SSHD = "/usr/sbin/sshd";
  private static final String LOG = "sshd.log";

  private final LoopbackServer server;

  private LocalSshd(LoopbackServer server) {
    this.server = server;
  }

  /** Starts a server. */
  public static LocalSshd start() {
    HostRequirements.require(Files.isExecutable(Path.of(SSHD)), "openssh-server is not installed");
    HostRequirements.requireProgram("ssh-keygen");
    if (HostRequirements.isRoot()) {
      try {
        Files.createDirectories(Path.of("/run/sshd"));
      } catch (IOException e) {
        throw new IllegalStateException("cannot make /run/sshd for sshd's privilege separation", e);
      }
    }
    return new LocalSshd(LoopbackServer.start("sshd", LocalSshd::command));
  }

  private static List<String> command(Path dir, int port) throws IOException {
    Path key = dir.resolve("host_ed25519");
    if (!Files.exists(key)) {
      Process keygen =
          new ProcessBuilder("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key.toString())
              .redirectErrorStream(true)
              .start();
      try {
        if (keygen.waitFor() != 0) {
          throw new IOException(
              "ssh-keygen: " + new String(keygen.getInputStream().readAllBytes()));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted making the host key", e);
      }
    }
    Path config = dir.resolve("sshd_config");
    Files.writeString(
        config,
        String.join(
            "\n",
            "Port " + port,
            "ListenAddress 127.0.0.1",
            "HostKey " + key,
            "PidFile " + dir.resolve("sshd.pid"),
            "UsePAM no",
            "StrictModes no",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "LogLevel VERBOSE",
            ""));
    return List.of(SSHD, "-D", "-f", config.toString(), "-E", dir.resolve(LOG).toString());
  }

  /** Its port on 127.0.0.1. */
  public int port() {
    return server.port();
  }

  /** The server's public host key line ({@code ssh-ed25519 AAAA...}). */
  public String hostKey() {
    return server.read("host_ed25519.pub").strip().replaceAll("\\s+\\S+@\\S+$", "");
  }

  /** Whether its log says a connection came from 127.0.0.1 within {@code timeout}. */
  public boolean sawConnection(Duration timeout) {
    return server.awaitText(LOG, "Connection from 127.0.0.1", timeout);
  }

  /** Its logs, for failure messages. */
  public String logs() {
    return server.logs();
  }

  @Override
  public void close() {
    server.close();
  }
}
