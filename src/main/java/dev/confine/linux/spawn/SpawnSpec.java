package dev.confine.linux.spawn;

import java.util.List;
import java.util.Objects;

/**
 * What to spawn. The executable, argv, environment entries and work dir are {@link
 * dev.confine.ByteStrings}: their bytes reach the kernel exactly.
 *
 * @param executable the resolved path of the program (absolute, or relative to {@code workDir})
 * @param argv the argument vector, argv[0] included
 * @param environment the complete environment as {@code NAME=VALUE} entries
 * @param workDir the child's working directory: entered by path when {@code directory} is null,
 *     else only shown in messages
 * @param pipeStdin whether the child's stdin is a pipe (else /dev/null); ignored with a terminal
 * @param terminal the path of a pty's slave side that becomes the child's controlling terminal and
 *     its stdin, stdout and stderr, or null for pipes
 * @param directory the open working directory the child starts in (fchdir), or null to enter {@code
 *     workDir} by path; its owner keeps it open at least until the spawn is submitted, and a spawn
 *     holds it open while it runs
 */
public record SpawnSpec(
    String executable,
    List<String> argv,
    List<String> environment,
    String workDir,
    boolean pipeStdin,
    String terminal,
    WorkDirectory directory) {

  /** A spec with pipes for stdout and stderr (and stdin when {@code pipeStdin}). */
  public SpawnSpec(
      String executable,
      List<String> argv,
      List<String> environment,
      String workDir,
      boolean pipeStdin) {
    this(executable, argv, environment, workDir, pipeStdin, null, null);
  }

  /** A spec that enters {@code workDir} by path (for the engine's own tests). */
  public SpawnSpec(
      String executable,
      List<String> argv,
      List<String> environment,
      String workDir,
      boolean pipeStdin,
      String terminal) {
    this(executable, argv, environment, workDir, pipeStdin, terminal, null);
  }

  /** A spec with pipes (and stdin when {@code pipeStdin}) that starts in {@code directory}. */
  public SpawnSpec(
      String executable,
      List<String> argv,
      List<String> environment,
      WorkDirectory directory,
      boolean pipeStdin) {
    this(executable, argv, environment, directory.shown(), pipeStdin, null, directory);
  }

  /** This spec with the child's stdio on {@code terminal} (null: pipes, stdin when asked). */
  public SpawnSpec withStdio(boolean pipeStdin, String terminal) {
    return new SpawnSpec(executable, argv, environment, workDir, pipeStdin, terminal, directory);
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
