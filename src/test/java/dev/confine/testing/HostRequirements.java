package dev.confine.testing;

import dev.confine.linux.sys.Availability;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Skips a test whose host lacks something it needs (root, cgroups, bubblewrap, a container engine)
 * with the reason, or fails it instead when {@code CONFINE_REQUIRE_ALL=1}: CI sets that so a
 * missing install step cannot pass as a skip.
 */
public final class HostRequirements {
  private HostRequirements() {}

  /** Whether skips are failures in this run. */
  public static boolean requireAll() {
    return "1".equals(System.getenv("CONFINE_REQUIRE_ALL"));
  }

  /**
   * Continues when {@code available}; otherwise skips the test with {@code reason}, or fails it
   * when {@link #requireAll()}.
   */
  public static void require(boolean available, String reason) {
    if (available) {
      return;
    }
    if (requireAll()) {
      Assertions.fail("CONFINE_REQUIRE_ALL=1 but this host cannot run the test: " + reason);
    }
    Assumptions.abort("skipped on this host: " + reason);
  }

  /**
   * Continues when {@code mechanism} works here; otherwise skips the test with its cause, or fails
   * it when {@link #requireAll()}.
   */
  public static void require(Availability mechanism) {
    require(mechanism.isAvailable(), mechanism.unavailabilityCause().orElse(""));
  }

  /** Requires {@code program} on this process's PATH (python3, ip, curl, ...). */
  public static void requireProgram(String program) {
    require(onPath(program), program + " is not installed (not on PATH)");
  }

  /** Whether {@code program} is an executable file in a directory of this process's PATH. */
  public static boolean onPath(String program) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return true;
      }
    }
    return false;
  }

  /** Requires that the tests run as root. */
  public static void requireRoot() {
    require(isRoot(), "needs root (uid 0)");
  }

  /** Whether the tests run as root. */
  public static boolean isRoot() {
    try {
      return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
    } catch (IOException | UnsupportedOperationException e) {
      return false;
    }
  }
}
