package dev.confine.testing;

import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * An attacker inside a runner's root: a thread that keeps changing the tree beneath the root while
 * execs run, so that a working directory checked as inside the root leads outside it a moment
 * later. Each {@link #workDirs() work dir} is one member of the family:
 *
 * <ul>
 *   <li>{@code link}: a symlink retargeted between a directory inside and an absolute path outside;
 *   <li>{@code up}: a symlink retargeted between a directory inside and a relative path that climbs
 *       out ({@code ../outside/...});
 *   <li>{@code swap}: a real directory swapped for a symlink to outside and back (the checked path
 *       then holds no symlink at all);
 *   <li>{@code mid/sub}: an intermediate component swapped the same way;
 *   <li>the absolute form of {@code swap}.
 * </ul>
 *
 * Every flip is a rename, so each name always exists except for a moment during a swap.
 */
public final class WorkDirFlipper implements AutoCloseable {
  private final Path root;
  private final Path outside;
  private final Thread thread;
  private final AtomicLong flips = new AtomicLong();
  private volatile boolean stop;
  private volatile Throwable failure;

  /**
   * Builds the tree beneath {@code root} (a directory) and {@code outside} (a sibling of it, so
   * that a relative link can climb out) and starts flipping.
   */
  public WorkDirFlipper(Path root, Path outside) throws IOException {
    this.root = root.toRealPath();
    this.outside = outside.toRealPath();
    if (!this.root.getParent().equals(this.outside.getParent())) {
      throw new IllegalArgumentException("outside must be a sibling of root");
    }
    Files.createDirectories(this.root.resolve("inside"));
    Files.createDirectories(this.root.resolve(".swap-dir"));
    Files.createDirectories(this.root.resolve(".mid-dir/sub"));
    for (String d : List.of("a", "b", "c/sub", "d")) {
      Files.createDirectories(this.outside.resolve(d));
    }
    Files.createSymbolicLink(this.root.resolve("link"), Path.of("inside"));
    Files.createSymbolicLink(this.root.resolve("up"), Path.of("inside"));
    Files.createSymbolicLink(this.root.resolve(".swap-link"), this.outside.resolve("b"));
    Files.createSymbolicLink(this.root.resolve(".mid-link"), this.outside.resolve("c"));
    Files.move(this.root.resolve(".swap-dir"), this.root.resolve("swap"));
    Files.move(this.root.resolve(".mid-dir"), this.root.resolve("mid"));
    thread = Thread.ofPlatform().name("workdir-flipper").daemon().unstarted(this::run);
    thread.start();
  }

  /** The work dirs to exec in, round robin. */
  public List<String> workDirs() {
    return List.of("link", "up", "swap", "mid/sub", root.resolve("swap").toString());
  }

  /** Whether {@code physicalCwd} (a child's {@code pwd -P}) lies outside the root. */
  public boolean escaped(byte[] physicalCwd) {
    String cwd = new String(physicalCwd, StandardCharsets.UTF_8).strip();
    return !(cwd.equals(root.toString()) || cwd.startsWith(root + "/"));
  }

  /** What a run of execs came to. */
  public record Tally(int ran, int refused, Map<String, Integer> escapes) {
    /** How many execs ran outside the root. */
    public int escaped() {
      return escapes.values().stream().mapToInt(Integer::intValue).sum();
    }
  }

  /**
   * Runs {@code execs} execs, the work dirs round robin, with {@code exec} (which returns the
   * child's {@code pwd -P} output) while the tree flips. A FORBIDDEN or INTERNAL refusal counts as
   * refused (the tree was caught mid-change); any other failure is thrown.
   */
  public Tally run(int execs, Function<String, byte[]> exec) {
    List<String> dirs = workDirs();
    int ran = 0;
    int refused = 0;
    Map<String, Integer> escapes = new TreeMap<>();
    for (int i = 0; i < execs; i++) {
      String wd = dirs.get(i % dirs.size());
      byte[] cwd;
      try {
        cwd = exec.apply(wd);
      } catch (SandboxException e) {
        if (e.kind() != Kind.FORBIDDEN && e.kind() != Kind.INTERNAL) {
          throw e;
        }
        refused++;
        continue;
      }
      ran++;
      if (escaped(cwd)) {
        escapes.merge(wd, 1, Integer::sum);
      }
    }
    return new Tally(ran, refused, escapes);
  }

  /** How many flips were made so far. */
  public long flips() {
    return flips.get();
  }

  private void run() {
    String outsideName = outside.getFileName().toString();
    boolean out = false;
    try {
      while (!stop) {
        out = !out;
        retarget("link", out ? outside.resolve("a") : Path.of("inside"));
        retarget("up", out ? Path.of("..", outsideName, "d") : Path.of("inside"));
        swap("swap", out);
        swap("mid", out);
        flips.incrementAndGet();
        // Mostly inside, so that most checks pass and the spawn is what meets the flip.
        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(out ? 50 : 1000));
      }
    } catch (Throwable t) {
      failure = t;
    }
  }

  private void retarget(String name, Path target) throws IOException {
    Path tmp = root.resolve("." + name + "-next");
    Files.deleteIfExists(tmp);
    Files.createSymbolicLink(tmp, target);
    Files.move(tmp, root.resolve(name), StandardCopyOption.ATOMIC_MOVE);
  }

  /** Puts the symlink (when {@code toLink}) or the real directory at {@code name}. */
  private void swap(String name, boolean toLink) throws IOException {
    Path at = root.resolve(name);
    Path dirStash = root.resolve("." + name + "-dir");
    Path linkStash = root.resolve("." + name + "-link");
    if (toLink) {
      Files.move(at, dirStash, StandardCopyOption.ATOMIC_MOVE);
      Files.move(linkStash, at, StandardCopyOption.ATOMIC_MOVE);
    } else {
      Files.move(at, linkStash, StandardCopyOption.ATOMIC_MOVE);
      Files.move(dirStash, at, StandardCopyOption.ATOMIC_MOVE);
    }
  }

  /** Stops flipping; rethrows what made the flipper fail. */
  @Override
  public void close() {
    stop = true;
    boolean interrupted = false;
    while (thread.isAlive()) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (failure != null) {
      throw new UncheckedIOException(
          "the flipper failed", failure instanceof IOException e ? e : new IOException(failure));
    }
  }
}
