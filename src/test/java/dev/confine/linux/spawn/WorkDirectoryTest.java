package dev.confine.linux.spawn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ByteStrings;
import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Syscalls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Opening a work dir beneath a root, with openat2 and with the component walk kept for kernels
 * without it (forced here): what stays beneath the root opens, what leads out is refused.
 */
class WorkDirectoryTest {
  private static final int ELOOP = 40;
  private static final int EXDEV = 18;
  private static final int ENOENT = 2;
  private static final int ENOTDIR = 20;

  @TempDir Path tmp;
  private Path root;
  private Path outside;

  @BeforeEach
  void tree() throws IOException {
    root = Files.createDirectories(tmp.resolve("root")).toRealPath();
    outside = Files.createDirectories(tmp.resolve("outside")).toRealPath();
    Files.createDirectories(root.resolve("a/b"));
    Files.createFile(root.resolve("file"));
    Files.createSymbolicLink(root.resolve("in"), Path.of("a/b"));
    Files.createSymbolicLink(root.resolve("abs-in"), root.resolve("a"));
    Files.createSymbolicLink(root.resolve("out"), outside);
    Files.createSymbolicLink(root.resolve("up"), Path.of("../outside"));
    Files.createSymbolicLink(root.resolve("a/climb"), Path.of("../.."));
  }

  private static Path where(WorkDirectory d) throws IOException {
    return Files.readSymbolicLink(Path.of("/proc/self/fd/" + d.fd()));
  }

  private WorkDirectory open(String beneath, boolean openat2) {
    return WorkDirectory.open(root.toString(), beneath, openat2);
  }

  private int refusal(String beneath, boolean openat2) {
    try (WorkDirectory d = open(beneath, openat2)) {
      throw new AssertionError(beneath + " opened at " + d);
    } catch (WorkDirectory.OpenFailed e) {
      assertThat(e.part()).isEqualTo(WorkDirectory.Part.BENEATH);
      return e.errno();
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void realDirectoriesBeneathTheRootOpen(boolean openat2) throws IOException {
    for (String beneath : new String[] {"", ".", "a", "a/b", "a/./b/", "a/b/../b"}) {
      try (WorkDirectory d = open(beneath, openat2)) {
        assertThat(where(d).startsWith(root)).as(beneath).isTrue();
      }
    }
    try (WorkDirectory d = open("a/b", openat2)) {
      assertThat(where(d)).isEqualTo(root.resolve("a/b"));
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void whatLeadsOutOfTheRootIsRefusedWithExdevOrEloop(boolean openat2) {
    for (String beneath : new String[] {"..", "a/../..", "up", "out", "a/climb"}) {
      int errno = refusal(beneath, openat2);
      // The walk refuses every symlink (ELOOP), openat2 the ones that leave (EXDEV).
      assertThat(errno).as(beneath).isIn(EXDEV, openat2 ? EXDEV : ELOOP);
    }
    assertThat(refusal("/etc", openat2)).isIn(EXDEV, ENOENT);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void missingAndNonDirectoriesAreTold(boolean openat2) {
    assertThat(refusal("missing", openat2)).isEqualTo(ENOENT);
    assertThat(refusal("file", openat2)).isEqualTo(ENOTDIR);
  }

  @Test
  void withOpenat2SymlinksThatStayBeneathAreFollowed() throws IOException {
    try (WorkDirectory d = open("in", true)) {
      assertThat(where(d)).isEqualTo(root.resolve("a/b"));
    }
    // An absolute target is refused even when it points inside: RESOLVE_BENEATH is lexical.
    assertThat(refusal("abs-in", true)).isEqualTo(EXDEV);
    assertThat(refusal("in", false)).isEqualTo(ELOOP);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aRootThatNowPassesThroughASymlinkIsRefused(boolean openat2) throws IOException {
    Path moved = tmp.resolve("moved");
    Files.move(root, moved);
    Files.createSymbolicLink(root, outside);
    try {
      assertThatThrownBy(() -> open("", openat2).close())
          .isInstanceOfSatisfying(
              WorkDirectory.OpenFailed.class,
              e -> {
                assertThat(e.part()).isEqualTo(WorkDirectory.Part.ROOT);
                assertThat(e.errno()).isEqualTo(ELOOP);
              });
    } finally {
      Files.delete(root);
      Files.move(moved, root);
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void namesThatAreNotUtf8AreOpenedByTheirBytes(boolean openat2) throws Exception {
    byte[] name = HexFormat.of().parseHex("fffe80616263");
    // java.nio cannot create it: a shell does, from an ASCII command line.
    Process p =
        new ProcessBuilder("sh", "-c", "mkdir \"$(printf '\\377\\376\\200abc')\"")
            .directory(root.toFile())
            .start();
    assertThat(p.waitFor()).isZero();
    Path made;
    try (var listing = Files.list(root)) {
      // A listed Path keeps the raw bytes of the name, though it prints them as U+FFFD.
      made = listing.filter(f -> f.toString().endsWith("abc")).findFirst().orElseThrow();
    }
    try (WorkDirectory d = open(ByteStrings.decode(name), openat2)) {
      assertThat(Files.isSameFile(Path.of("/proc/self/fd/" + d.fd()), made)).isTrue();
    }
    try (WorkDirectory d = open(ByteStrings.decode(name) + "/..", openat2)) {
      assertThat(where(d)).isEqualTo(root);
    }
  }

  @Test
  void theFdStaysOpenWhileASpawnUsesItAndClosesExactlyOnce() {
    WorkDirectory d = open("a", true);
    int fd = d.acquire();
    d.close();
    d.close();
    assertThat(Syscalls.fcntl(fd, LibC.F_GETFD(), 0)).isNotNegative();
    d.release();
    assertThat(Syscalls.fcntl(fd, LibC.F_GETFD(), 0)).isEqualTo(-LibC.EBADF());
    assertThat(d.acquire()).isEqualTo(-1);
  }
}
