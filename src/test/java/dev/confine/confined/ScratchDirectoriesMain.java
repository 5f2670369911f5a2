package dev.confine.confined;

import dev.confine.SandboxException;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collection;
import java.util.Set;

/**
 * Uses {@link ScratchDirectories} in a JVM of its own, for ScratchDirectoriesTest to see what is
 * left once that JVM has exited. Prints {@code parent=<path>} (and what the mode reports), then
 * exits normally.
 *
 * <p>Modes: {@code clean} (an exec given back reusable with content, one given back not reusable,
 * one still holding its empty directory at exit), {@code hostile OUTSIDE} (an exec given back not
 * reusable, and one holding at exit a directory it made unreadable, with a 300-level tree, a fifo,
 * a link to OUTSIDE, read-only and locked directories), {@code litter} (an exec holding a directory
 * with a file when the JVM halts, as a killed one, without running its shutdown hooks), {@code
 * create} (create only, reporting a failure's kind), {@code churn N} (N execs given back not
 * reusable, reporting the size of the JVM's delete-on-exit list; needs {@code --add-opens
 * java.base/java.io=ALL-UNNAMED}), {@code modes} (reports {@code exec=} and {@code parent=}
 * followed by the modes of an exec's directory and of the parent, as {@code ls} shows them).
 */
public final class ScratchDirectoriesMain {
  private ScratchDirectoriesMain() {}

  public static void main(String[] args) throws Exception {
    ScratchDirectories s;
    try {
      s = ScratchDirectories.create(null);
    } catch (SandboxException e) {
      System.out.println("failed=" + e.kind());
      return;
    }
    System.out.println("parent=" + s.parent());
    switch (args[0]) {
      case "clean" -> {
        Path a = s.take("a");
        Files.createDirectories(a.resolve("x/y"));
        Files.writeString(a.resolve("x/y/file"), "data");
        s.giveBack(a, true);
        Path b = s.take("b");
        Path c = s.take("c");
        Files.writeString(c.resolve("file"), "data");
        s.giveBack(c, false);
        s.giveBack(b, true);
        s.take("held at exit");
      }
      case "hostile" -> {
        Path a = s.take("a");
        Files.createDirectories(a.resolve("x/y"));
        s.giveBack(a, false);
        Path b = s.take("b");
        Path bottom = Files.createDirectories(b.resolve("d/".repeat(300)));
        Files.writeString(bottom.resolve("f"), "x");
        Files.createSymbolicLink(bottom.resolve("out"), Path.of(args[1]));
        if (new ProcessBuilder("mkfifo", bottom.resolve("fifo").toString()).start().waitFor()
            != 0) {
          throw new IllegalStateException("mkfifo failed");
        }
        Path ro = Files.createDirectory(b.resolve("ro"));
        Files.writeString(ro.resolve("f"), "x");
        Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("r-xr-xr-x"));
        Path locked = Files.createDirectories(b.resolve("locked/in"));
        Files.writeString(locked.resolve("f"), "x");
        Files.setPosixFilePermissions(locked, Set.of());
        Files.setPosixFilePermissions(locked.getParent(), Set.of());
        Files.setPosixFilePermissions(b, Set.of());
      }
      case "litter" -> {
        Path a = s.take("a");
        Files.writeString(a.resolve("left"), "by an exec still running at exit");
        System.out.flush();
        Runtime.getRuntime().halt(0);
      }
      case "create" -> {}
      case "modes" -> {
        Path a = s.take("a");
        System.out.println("exec=" + PosixFilePermissions.toString(mode(a)));
        System.out.println("parent=" + PosixFilePermissions.toString(mode(s.parent())));
      }
      case "churn" -> {
        int n = Integer.parseInt(args[1]);
        for (int i = 0; i < n; i++) {
          s.giveBack(s.take("churn"), false);
        }
        Field files = Class.forName("java.io.DeleteOnExitHook").getDeclaredField("files");
        files.setAccessible(true);
        System.out.println("deleteOnExit=" + ((Collection<?>) files.get(null)).size());
      }
      default -> throw new IllegalArgumentException(args[0]);
    }
  }

  private static Set<PosixFilePermission> mode(Path p) throws IOException {
    return Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
  }
}
