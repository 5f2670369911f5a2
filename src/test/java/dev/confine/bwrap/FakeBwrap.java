package dev.confine.bwrap;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * A stand-in for the bwrap binary: a shell script named {@code bwrap} in a directory of its own
 * (put that directory on a PATH, or give {@link #binary()} as the binary) that records the
 * arguments it was started with, byte for byte, writes {@code stdout} and exits with {@code
 * exitCode}. It runs nothing: tests of the command line a runner builds read {@link
 * #recordedArgv()} instead.
 */
final class FakeBwrap {
  private final Path dir;
  private final Path binary;
  private final Path argvFile;

  private FakeBwrap(Path dir, Path binary, Path argvFile) {
    this.dir = dir;
    this.binary = binary;
    this.argvFile = argvFile;
  }

  /** A fake that exits 0 and prints nothing, in {@code parent/fake-bwrap}. */
  static FakeBwrap create(Path parent) throws IOException {
    return create(parent, 0, "");
  }

  /**
   * A fake in {@code parent/fake-bwrap} that exits with {@code exitCode} after writing {@code
   * stdout}.
   */
  static FakeBwrap create(Path parent, int exitCode, String stdout) throws IOException {
    Path dir = Files.createDirectories(parent.resolve("fake-bwrap"));
    Path argv = dir.resolve("argv");
    Path out = dir.resolve("stdout");
    Files.writeString(out, stdout, StandardCharsets.UTF_8);
    Path binary = dir.resolve("bwrap");
    // NUL-terminated, so that arguments holding newlines, or nothing, are recorded as they came.
    String script =
        "#!/bin/sh\n"
            + "for a in \"$@\"; do printf '%s\\0' \"$a\"; done > "
            + shellQuote(argv.toString())
            + "\n"
            + "cat "
            + shellQuote(out.toString())
            + "\n"
            + "exit "
            + exitCode
            + "\n";
    Files.writeString(binary, script, StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(binary, PosixFilePermissions.fromString("rwxr-xr-x"));
    return new FakeBwrap(dir, binary, argv);
  }

  /** The directory holding the fake, to put on a PATH. */
  Path dir() {
    return dir;
  }

  /** The fake binary itself. */
  Path binary() {
    return binary;
  }

  /** Whether the fake has been started since it was created. */
  boolean wasStarted() {
    return Files.exists(argvFile);
  }

  /**
   * The arguments of the last start (without the program name).
   *
   * @throws IOException when it has not been started
   */
  List<String> recordedArgv() throws IOException {
    byte[] bytes = Files.readAllBytes(argvFile);
    List<String> args = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == 0) {
        args.add(new String(bytes, start, i - start, StandardCharsets.UTF_8));
        start = i + 1;
      }
    }
    return args;
  }

  private static String shellQuote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }
}
