package dev.confine.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A server program that a fixture ({@link UpstreamHttpProxy}, {@link UpstreamSocksProxy}) starts
 * for a test: its configuration and logs in a private temporary directory, listening on 127.0.0.1
 * on a free ephemeral port, in a process group of its own ({@code setsid}) so that {@link #close()}
 * ends it together with every process it forked.
 *
 * <p>The port is picked by binding a {@link ServerSocket} to port 0 and closing it; should another
 * program take it before the server binds it, the server exits saying so and the start is tried
 * again on another port. The server is ready once a process of its group holds a socket listening
 * on 127.0.0.1 at the port ({@code /proc/net/tcp}): a readiness probe by connecting would itself be
 * a client in the server's log, and could reach another program that holds the port.
 */
final class LoopbackServer implements AutoCloseable {
  /** How long a server may take to listen before its start fails. */
  static final Duration START_TIMEOUT = Duration.ofSeconds(10);

  /** What a server that lost its port to another program says (tinyproxy, dante). */
  static final Pattern PORT_TAKEN =
      Pattern.compile("Address already in use|Could not create listening sockets");

  private static final int ATTEMPTS = 5;
  static final String CONSOLE = "console.log";

  /**
   * Writes a server's configuration for {@code port} into {@code dir}; returns its command line.
   */
  @FunctionalInterface
  interface Launch {
    List<String> command(Path dir, int port) throws IOException;
  }

  private final String name;
  private final Path dir;
  private final Process process;
  private final int port;
  private boolean closed;

  private LoopbackServer(String name, Path dir, Process process, int port) {
    this.name = name;
    this.dir = dir;
    this.process = process;
    this.port = port;
  }

  /** Starts {@code name} on a free port, waiting up to {@link #START_TIMEOUT} for it to listen. */
  static LoopbackServer start(String name, Launch launch) {
    return start(name, launch, START_TIMEOUT, LoopbackServer::freePort);
  }

  /**
   * Starts {@code name} on a port from {@code ports} (asked again when the server reports the port
   * taken), waiting up to {@code timeout} for it to listen; otherwise ends it, removes its
   * directory and throws with its logs.
   */
  static LoopbackServer start(String name, Launch launch, Duration timeout, IntSupplier ports) {
    Path dir;
    try {
      dir = Files.createTempDirectory("confine-" + name + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String failure = "";
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      int port = ports.getAsInt();
      LoopbackServer server = null;
      try {
        clearLogs(dir);
        List<String> command = new ArrayList<>(List.of("setsid"));
        command.addAll(launch.command(dir, port));
        Process process =
            new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve(CONSOLE).toFile())
                .start();
        server = new LoopbackServer(name, dir, process, port);
        String outcome = server.awaitListening(timeout);
        if (outcome.isEmpty()) {
          return server;
        }
        failure = outcome + " (port " + port + ", attempt " + attempt + ")\n" + server.logs();
        server.end();
        if (!outcome.startsWith("exited") || !PORT_TAKEN.matcher(failure).find()) {
          break;
        }
      } catch (IOException | RuntimeException e) {
        if (server != null) {
          server.end();
        }
        deleteRecursively(dir);
        throw new IllegalStateException(name + " did not start: " + e, e);
      }
    }
    deleteRecursively(dir);
    throw new IllegalStateException(name + " did not start: " + failure);
  }

  /** A port on 127.0.0.1 that was free a moment ago. */
  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The port the server listens on, at 127.0.0.1. */
  int port() {
    return port;
  }

  /** The server's private directory: its configuration and logs. */
  Path directory() {
    return dir;
  }

  /** The server's pid, which is also its process group's id. */
  long pid() {
    return process.toHandle().pid();
  }

  /** The text of {@code file} in the server's directory ("" before the server wrote it). */
  String read(String file) {
    try {
      return Files.readString(dir.resolve(file), StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      return "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Whether {@code file} contains {@code text} within {@code timeout}: a server may log what it did
   * just after its client saw the outcome (dante logs a refusal after sending it).
   */
  boolean awaitText(String file, String text, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!read(file).contains(text)) {
      if (System.nanoTime() > deadline || Thread.currentThread().isInterrupted()) {
        return false;
      }
      sleepBriefly();
    }
    return true;
  }

  /** Every log in the server's directory (its console and the files it logs to), each headed. */
  String logs() {
    StringBuilder text = new StringBuilder();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path log : files.filter(p -> p.toString().endsWith(".log")).sorted().toList()) {
        text.append("--- ").append(name).append(' ').append(log.getFileName()).append(" ---\n");
        text.append(read(log.getFileName().toString()));
      }
    } catch (IOException e) {
      text.append("(logs unreadable: ").append(e).append(")\n");
    }
    return text.toString();
  }

  /**
   * Ends the server and every process of its group, waits for them, and removes its directory.
   *
   * @throws IllegalStateException when a process of its group outlived the kill
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<Long> left = end();
    deleteRecursively(dir);
    if (!left.isEmpty()) {
      throw new IllegalStateException(name + " left processes " + left + " behind");
    }
  }

  /**
   * Asks the server to end (SIGTERM: tinyproxy and dante's main process then end their own
   * children), then kills whatever of its group is left; returns the pids that still lived after 5
   * seconds of that.
   */
  private List<Long> end() {
    long pgid = pid();
    boolean interrupted = false;
    process.destroy();
    try {
      if (!process.waitFor(3, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      interrupted = true;
      process.destroyForcibly();
    }
    List<Long> left = groupMembers(pgid);
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (!left.isEmpty() && System.nanoTime() < deadline) {
      for (long pid : left) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
      }
      sleepBriefly();
      left = groupMembers(pgid);
    }
    try {
      process.waitFor(); // reaps it: no zombie child of this JVM stays behind
    } catch (InterruptedException e) {
      interrupted = true;
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return left;
  }

  /** "" once the server listens; otherwise why not ("exited with 1", "not listening after"). */
  private String awaitListening(Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (Thread.currentThread().isInterrupted()) {
        return "interrupted while waiting for it to listen";
      }
      if (!process.isAlive()) {
        return "exited with " + process.exitValue() + " before listening";
      }
      OptionalLong inode = listeningInode(port);
      if (inode.isPresent() && heldByGroup(pid(), inode.getAsLong())) {
        long pgrp = processGroup(pid());
        if (pgrp != pid()) {
          throw new IllegalStateException(
              name + " is in process group " + pgrp + ", not its own (" + pid() + ")");
        }
        return "";
      }
      if (System.nanoTime() > deadline) {
        return "not listening after " + timeout.toMillis() + " ms";
      }
      sleepBriefly();
    }
  }

  /** The inode of the socket listening on 127.0.0.1:{@code port}, if any. */
  private static OptionalLong listeningInode(int port) throws IOException {
    String local = String.format("0100007F:%04X", port);
    for (String line : Files.readAllLines(Path.of("/proc/net/tcp"))) {
      String[] f = line.trim().split("\\s+");
      if (f.length > 9 && f[1].equals(local) && f[3].equals("0A")) {
        return OptionalLong.of(Long.parseLong(f[9]));
      }
    }
    return OptionalLong.empty();
  }

  /** Whether a process of group {@code pgid} has the socket {@code inode} open. */
  private static boolean heldByGroup(long pgid, long inode) {
    Path socket = Path.of("socket:[" + inode + "]");
    for (long pid : groupMembers(pgid)) {
      try (Stream<Path> fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
        for (Path fd : fds.toList()) {
          try {
            if (Files.readSymbolicLink(fd).equals(socket)) {
              return true;
            }
          } catch (IOException closedMeanwhile) {
            // the fd closed while we listed
          }
        }
      } catch (IOException goneOrForeign) {
        // the process ended, or is not ours to read
      }
    }
    return false;
  }

  /** The live (not zombie) processes whose process group is {@code pgid}. */
  static List<Long> groupMembers(long pgid) {
    List<Long> members = new ArrayList<>();
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (Path proc : procs.toList()) {
        String pid = proc.getFileName().toString();
        if (!pid.chars().allMatch(Character::isDigit)) {
          continue;
        }
        String[] stat = stat(Long.parseLong(pid));
        if (stat.length > 2 && !stat[0].equals("Z") && Long.parseLong(stat[2]) == pgid) {
          members.add(Long.parseLong(pid));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return members;
  }

  /**
   * Whether {@code pid} is a process that runs: not ended, and not a zombie (ended, waiting for its
   * parent to collect it, which for dante's children that outlive their parent is init).
   */
  static boolean running(long pid) {
    String[] stat = stat(pid);
    return stat.length > 0 && !stat[0].equals("Z");
  }

  private static long processGroup(long pid) {
    String[] stat = stat(pid);
    return stat.length > 2 ? Long.parseLong(stat[2]) : -1;
  }

  /** The fields of {@code /proc/PID/stat} after the command name (state, ppid, pgrp, ...). */
  private static String[] stat(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    } catch (IOException ended) {
      return new String[0];
    }
  }

  private static void clearLogs(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      for (Path log : files.filter(p -> p.toString().endsWith(".log")).toList()) {
        Files.delete(log);
      }
    }
  }

  private static void deleteRecursively(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (NoSuchFileException gone) {
      // already removed
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void sleepBriefly() {
    try {
      Thread.sleep(10);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** {@code s} percent-encoded for a URL's userinfo (all but RFC 3986's unreserved characters). */
  static String percentEncode(String s) {
    StringBuilder out = new StringBuilder();
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xff);
      if ((c >= 'a' && c <= 'z')
          || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '.'
          || c == '_'
          || c == '~') {
        out.append(c);
      } else {
        out.append('%').append(String.format("%02X", b & 0xff));
      }
    }
    return out.toString();
  }
}
