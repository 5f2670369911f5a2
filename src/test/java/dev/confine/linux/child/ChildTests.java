package dev.confine.linux.child;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.loop.EventLoop;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.sys.Syscalls;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * What the engine-level tests of this package share: shell specs, waiting for a condition (never
 * for a time), processes a test started outside the engine's view (by their pid and start time, so
 * that a cleanup never reaches a process that reused the pid), and this JVM's fds by number.
 */
final class ChildTests {
  static final List<String> ENV = List.of("PATH=/usr/bin:/bin", "LC_ALL=C");

  /** How long any condition may take on a loaded machine before the test gives up. */
  static final Duration PATIENCE = Duration.ofSeconds(30);

  private ChildTests() {}

  /** {@code /bin/sh -c script}, stdin a pipe when {@code pipeStdin}. */
  static SpawnSpec sh(String script, boolean pipeStdin) {
    return new SpawnSpec("/bin/sh", List.of("sh", "-c", script), ENV, "/", pipeStdin);
  }

  /** Waits until {@code condition} holds, failing after {@link #PATIENCE}. */
  static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + PATIENCE + " waiting for " + what);
      }
      TimeUnit.MILLISECONDS.sleep(10);
    }
  }

  /** Runs {@code body} on a new platform or virtual thread and returns what it returned. */
  static <T> T onThread(boolean virtual, Callable<T> body) throws Exception {
    FutureTask<T> task = new FutureTask<>(body);
    Thread t =
        virtual
            ? Thread.ofVirtual().name("child-test-virtual").start(task)
            : Thread.ofPlatform().name("child-test-platform").start(task);
    try {
      return task.get(PATIENCE.toSeconds() * 2, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof Exception x) {
        throw x;
      }
      throw e;
    } finally {
      t.interrupt();
      t.join(PATIENCE.toMillis());
    }
  }

  /** A script fragment that writes {@code pid}'s value to {@code file} atomically. */
  static String writePid(String pidExpr, Path file) {
    return "echo " + pidExpr + " > " + file + ".tmp && mv " + file + ".tmp " + file;
  }

  /** Waits for {@code file} (written by {@link #writePid}) and returns the process it names. */
  static Proc awaitPidFile(Path file) throws InterruptedException {
    await(() -> Files.exists(file), file + " to be written");
    try {
      return Proc.of(Integer.parseInt(Files.readString(file).trim()));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * A process by pid and start time (field 22 of its stat), so that a later look or kill never
   * mistakes another process that got the pid for it.
   */
  record Proc(int pid, long startTime) {
    /** The process that has {@code pid} now. */
    static Proc of(int pid) {
      String stat = stat(pid);
      if (stat == null) {
        throw new AssertionError("no process " + pid);
      }
      return new Proc(pid, startTime(stat));
    }

    /** Whether it still runs (not gone, not a zombie nobody reaps). */
    boolean alive() {
      String stat = stat(pid);
      if (stat == null || startTime(stat) != startTime) {
        return false;
      }
      char state = stat.charAt(stat.lastIndexOf(')') + 2);
      return state != 'Z' && state != 'X';
    }

    /** Waits until it no longer runs. */
    void awaitDead() throws InterruptedException {
      await(() -> !alive(), "process " + pid + " to die");
    }

    /** SIGKILL, when it still runs: a test's cleanup. */
    void kill() {
      if (alive()) {
        Syscalls.kill(pid, LibC.SIGKILL());
      }
    }

    private static String stat(int pid) {
      try {
        return Files.readString(Path.of("/proc/" + pid + "/stat"), StandardCharsets.UTF_8);
      } catch (NoSuchFileException e) {
        return null;
      } catch (IOException e) {
        return null; // it went away while being read
      }
    }

    private static long startTime(String stat) {
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return Long.parseLong(fields[19]); // field 22 overall; fields[0] is field 3 (state)
    }
  }

  /** This JVM's open fds and what each is, by number. */
  static TreeMap<Integer, String> fds() {
    TreeMap<Integer, String> fds = new TreeMap<>();
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      for (Path p : s.toList()) {
        try {
          fds.put(
              Integer.parseInt(p.getFileName().toString()), Files.readSymbolicLink(p).toString());
        } catch (IOException gone) {
          // the listing's own fd, or one closed meanwhile
        }
      }
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return fds;
  }

  /**
   * Waits until this JVM holds no fd of the kinds the engine opens (pipes, pidfds, eventfds, ptys)
   * that it did not hold in {@code fds}, and the loop has {@code registrations} again: the loop
   * closes on its own thread, a moment later. Other fds (a jar the class loader opens) are not the
   * engine's and are not compared.
   */
  static void awaitNothingLeft(TreeMap<Integer, String> fds, int registrations)
      throws InterruptedException {
    EventLoop loop = EventLoop.shared();
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    List<String> extra;
    while (!(extra = newEngineFds(fds)).isEmpty() || loop.registrationCount() != registrations) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "left behind: fds "
                + extra
                + ", loop registrations "
                + loop.registrationCount()
                + " (were "
                + registrations
                + ")");
      }
      TimeUnit.MILLISECONDS.sleep(10);
    }
  }

  /**
   * The fds of the engine's kinds open now that were not open, as the same file, in {@code before}.
   */
  static List<String> newEngineFds(TreeMap<Integer, String> before) {
    List<String> extra = new ArrayList<>();
    fds()
        .forEach(
            (fd, what) -> {
              boolean engineKind =
                  what.startsWith("pipe:")
                      || what.startsWith("anon_inode:")
                      || what.startsWith("/dev/pts/")
                      || what.equals("/dev/ptmx");
              if (engineKind && !what.equals(before.get(fd))) {
                extra.add(fd + " -> " + what);
              }
            });
    return extra;
  }
}
