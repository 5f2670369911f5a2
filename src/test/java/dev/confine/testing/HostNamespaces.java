package dev.confine.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Which threads of this JVM are not in the host's (the thread-group leader's) namespaces. */
public final class HostNamespaces {
  private HostNamespaces() {}

  /**
   * The kernel names ({@code comm}, at most 15 characters) of this JVM's threads whose network or
   * mount namespace is not the thread-group leader's, each with the namespace that differs.
   */
  public static List<String> threadsOutside() throws IOException {
    List<String> foreign = new ArrayList<>();
    Path self = Path.of("/proc/self");
    try (Stream<Path> tasks = Files.list(self.resolve("task"))) {
      for (Path task : tasks.toList()) {
        try {
          for (String ns : List.of("net", "mnt")) {
            if (!Files.readSymbolicLink(task.resolve("ns/" + ns))
                .equals(Files.readSymbolicLink(self.resolve("ns/" + ns)))) {
              foreign.add(Files.readString(task.resolve("comm")).strip() + " (" + ns + ")");
            }
          }
        } catch (IOException e) {
          // the thread ended meanwhile
        }
      }
    }
    return foreign;
  }
}
