package dev.confine.local;

import dev.confine.CapsMechanism;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.linux.Engine;
import dev.confine.linux.cgroup.CgroupGuard;
import dev.confine.linux.cgroup.Cgroups;
import dev.confine.linux.child.ChildOutcome;
import dev.confine.linux.child.Execution;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.tree.TreeLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Run in a JVM of its own by {@link TinyMemoryCapTest} (a crash or hang there must not take the
 * test JVM with it): execs under memory caps at and just above {@link
 * ResourceLimits#MIN_MEMORY_BYTES} through the library, then caps far below it (4 KiB, 1 byte)
 * straight on the engine, which the library refuses but which once aborted the JVM. Prints one line
 * per batch and "survived" at the end.
 */
public final class TinyMemoryCapMain {
  private TinyMemoryCapMain() {}

  public static void main(String[] args) throws Exception {
    Path root = Files.createTempDirectory("confine-tiny-cap");
    LocalRunner runner = LocalRunner.builder(root.toString()).caps(CapsMechanism.CGROUP_V1).build();
    int runs = Integer.parseInt(args[0]);
    for (long cap :
        List.of(ResourceLimits.MIN_MEMORY_BYTES, ResourceLimits.MIN_MEMORY_BYTES + 4096)) {
      for (List<String> cmd : List.of(List.of("true"), List.of("sh", "-c", "true"))) {
        int ok = 0;
        for (int i = 0; i < runs; i++) {
          ExecResult r =
              runner.exec(
                  cmd.get(0),
                  cmd.subList(1, cmd.size()),
                  ExecOptions.builder()
                      .resources(ResourceLimits.builder().memoryBytes(cap).build())
                      .build());
          ok += r.exitCode() == 0 ? 1 : 0;
        }
        System.out.println("library cap=" + cap + " " + String.join(" ", cmd) + " ok=" + ok);
      }
    }
    // Below the minimum the library refuses; the engine still takes it, and must stay alive: no
    // JVM thread is charged to, or limited by, the child's memory cgroup.
    try {
      ResourceLimits.builder().memoryBytes(4096).build();
      System.out.println("library took a 4 KiB cap");
    } catch (SandboxException e) {
      System.out.println("library refused 4096: " + e.kind());
    }
    Cgroups cgroups = Cgroups.probe(Cgroups.Version.V1, null).get().orElseThrow();
    for (long cap : List.of(4096L, 1L, 8192L)) {
      int ended = 0;
      for (int i = 0; i < runs; i++) {
        ChildOutcome c =
            Execution.start(
                    new SpawnSpec(
                        "/bin/sh",
                        List.of("sh", "-c", "true"),
                        List.of("PATH=/usr/bin:/bin"),
                        root.toString(),
                        false),
                    null,
                    1 << 16,
                    new CgroupGuard(cgroups, new TreeLimits(cap, 0, 0, 0)))
                .runToCompletion(Long.MAX_VALUE, Engine.DRAIN.toNanos());
        ended += c.exit() != null ? 1 : 0;
      }
      System.out.println("engine cap=" + cap + " ended=" + ended);
    }
    Files.delete(root);
    System.out.println("survived");
  }
}
