package dev.confine.linux;

import java.util.List;
import java.util.Objects;

/**
 * What to spawn.
 *
 * @param executable the resolved path of the program (absolute, or relative to {@code workDir})
 * @param argv the argument vector, argv[0] included
 * @param environment the complete environment as {@code NAME=VALUE} entries
 * @param workDir the child's working directory
 * @param pipeStdin whether the child's stdin is a pipe (else /dev/null); ignored with a terminal
 * @param terminal the path of a pty's slave side that becomes the child's controlling terminal and
 *     its stdin, stdout and stderr, or null for pipes
 */
public record SpawnSpec(
    String executable,
    List<String> argv,
    List<String> environment,
    String workDir,
    boolean pipeStdin,
    String terminal) {

  /** A spec with pipes for stdout and stderr (and stdin when {@code pipeStdin}). */
  public SpawnSpec(
      String executable,
      List<String> argv,
      List<String> environment,
      String workDir,
      boolean pipeStdin) {
    this(executable, argv, environment, workDir, pipeStdin, null);
  }

  /** Copies the lists. */
  public SpawnSpec {
    Objects.requireNonNull(executable, "executable");
    argv = List.copyOf(argv);
    environment = List.copyOf(environment);
    Objects.requireNonNull(workDir, "workDir");
    if (argv.isEmpty()) {
      throw new IllegalArgumentException("argv must hold at least argv[0]");
    }
  }
}
