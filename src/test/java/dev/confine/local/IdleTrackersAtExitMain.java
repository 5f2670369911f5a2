package dev.confine.local;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Run in a JVM of its own by {@link IdleTrackersAtExitTest}: a few execs without caps (each tracked
 * by a tree cgroup, kept idle for reuse afterwards without the janitor thread ever starting), then
 * a normal exit. Prints this JVM's pid.
 */
public final class IdleTrackersAtExitMain {
  private IdleTrackersAtExitMain() {}

  public static void main(String[] args) throws Exception {
    Path root = Files.createTempDirectory("confine-idle-at-exit");
    LocalRunner runner = LocalRunner.create(root.toString());
    for (int i = 0; i < 5; i++) {
      runner.exec("true", List.of(), null);
    }
    Files.delete(root);
    System.out.println(ProcessHandle.current().pid());
  }
}
