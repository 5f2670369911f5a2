package dev.confine.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;

/** This JVM's child processes, as the kernel lists them per thread. */
public final class JvmChildren {
  private JvmChildren() {}

  /** The pids of this JVM's children (zombies included), across all its threads. */
  public static Set<Integer> pids() throws IOException {
    Set<Integer> pids = new HashSet<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path t : tasks.toList()) {
        try {
          for (String p : Files.readString(t.resolve("children")).trim().split("\\s+")) {
            if (!p.isEmpty()) {
              pids.add(Integer.parseInt(p));
            }
          }
        } catch (IOException threadGone) {
          // the thread ended while we listed
        }
      }
    }
    return pids;
  }
}
