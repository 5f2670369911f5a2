package dev.confine.linux.spawn;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.spawn.ExecutableLookup.Found;
import dev.confine.linux.spawn.ExecutableLookup.NotExecutable;
import dev.confine.linux.spawn.ExecutableLookup.NotFound;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.RawBytes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Finding the program before the spawn: paths beneath the work directory's fd, bare names in the
 * search path (absolute entries only), and "not found" told apart from "not executable".
 */
class ExecutableLookupTest {
  @TempDir Path tmp;
  private Path root;
  private WorkDirectory work;

  @BeforeEach
  void tree() throws IOException {
    HostRequirements.require(NativeAccess.availability());
    root = tmp.toRealPath();
    Files.createDirectories(root.resolve("work/sub"));
    executable(root.resolve("work/sub/prog"));
    Files.writeString(root.resolve("work/plain"), "data");
    Files.createDirectories(root.resolve("a"));
    Files.createDirectories(root.resolve("b"));
    Files.createDirectories(root.resolve("c"));
    work = WorkDirectory.open(root.toString(), "work");
  }

  @AfterEach
  void close() {
    if (work != null) {
      work.close();
    }
  }

  private static Path executable(Path p) throws IOException {
    Files.writeString(p, "#!/bin/sh\n");
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    return p;
  }

  private ExecutableLookup.Result find(String command, String searchPath) {
    return ExecutableLookup.find(command, work, searchPath);
  }

  @Test
  void aPathWithASlashIsLookedUpBeneathTheWorkDirectoryNotTheJvmsOwn() {
    assertThat(find("sub/prog", null)).isEqualTo(new Found("sub/prog"));
    assertThat(find("./sub/prog", null)).isEqualTo(new Found("./sub/prog"));
    assertThat(find(root + "/work/sub/prog", null)).isEqualTo(new Found(root + "/work/sub/prog"));
    // The JVM's working directory has no sub/prog: a lookup there would say not found.
    assertThat(Files.exists(Path.of("sub/prog"))).isFalse();
  }

  @Test
  void whatCannotRunIsToldApartFromWhatIsMissing() {
    assertThat(find("sub/missing", null)).isInstanceOf(NotFound.class);
    assertThat(find("missing/prog", null)).isInstanceOf(NotFound.class);
    assertThat(find("./plain", null)).isEqualTo(new NotExecutable("permission denied"));
    assertThat(find("sub", "/bin")).isInstanceOf(NotFound.class); // a bare name: PATH only
    assertThat(find("./sub", null)).isEqualTo(new NotExecutable("is a directory"));
    assertThat(find("./plain/x", null)).isInstanceOf(NotFound.class); // ENOTDIR
  }

  @Test
  void aBareNameIsTheFirstExecutableRegularFileInTheSearchPath() throws IOException {
    Files.writeString(root.resolve("a/tool"), "not executable");
    Files.createDirectory(root.resolve("b/tool"));
    executable(root.resolve("c/tool"));
    String path = root + "/a:" + root + "/b:" + root + "/c";
    assertThat(find("tool", path)).isEqualTo(new Found(root + "/c/tool"));
    assertThat(find("tool", root + "/a:" + root + "/b")).isInstanceOf(NotFound.class);
    assertThat(find("tool", null)).isInstanceOf(NotFound.class);
    assertThat(find("tool", "")).isInstanceOf(NotFound.class);
  }

  @Test
  void aSymlinkToAnExecutableIsFound() throws IOException {
    Files.createSymbolicLink(root.resolve("a/link"), root.resolve("work/sub/prog"));
    Files.createSymbolicLink(root.resolve("a/dangling"), root.resolve("nowhere"));
    assertThat(find("link", root + "/a")).isEqualTo(new Found(root + "/a/link"));
    assertThat(find("dangling", root + "/a")).isInstanceOf(NotFound.class);
  }

  @Test
  void emptyAndRelativeEntriesAreSkippedSoABareNameNeverRunsFromACurrentDirectory()
      throws IOException {
    executable(root.resolve("a/tool"));
    // A relative entry that leads to root/a from whatever directory it is resolved in.
    String relative = "../".repeat(64) + root.toString().substring(1) + "/a";
    assertThat(Files.isExecutable(Path.of(relative, "tool"))).isTrue();
    assertThat(find("tool", relative)).isInstanceOf(NotFound.class);
    assertThat(find("tool", ":" + relative + "::.")).isInstanceOf(NotFound.class);
    assertThat(find("tool", relative + ":" + root + "/a")).isEqualTo(new Found(root + "/a/tool"));
  }

  @Test
  void trailingSlashesOfAnEntryAreDropped() throws IOException {
    executable(root.resolve("a/tool"));
    assertThat(find("tool", root + "/a///")).isEqualTo(new Found(root + "/a/tool"));
    assertThat(find("sh", "/nonexistent:/bin/")).isEqualTo(new Found("/bin/sh"));
    assertThat(find("bin", "/")).isInstanceOf(NotFound.class); // /bin is a directory
  }

  @Test
  void namesThatAreNotUtf8AreLookedUpByTheirBytes() throws Exception {
    RawBytes.sh(root.resolve("a"), "printf '#!/bin/sh\\n' > \"$X\"; chmod 755 \"$X\"");
    RawBytes.sh(root.resolve("work"), "mkdir \"$X\"; printf x > \"$X/$X\"; chmod 755 \"$X/$X\"");
    String name = RawBytes.NOT_UTF8_STRING;
    assertThat(find(name, root + "/a")).isEqualTo(new Found(root + "/a/" + name));
    assertThat(find(name + "/" + name, null)).isEqualTo(new Found(name + "/" + name));
    // The same name as text (U+FFFD where the bytes were) is another file: not there.
    String replaced = new String(RawBytes.NOT_UTF8, java.nio.charset.StandardCharsets.UTF_8);
    assertThat(find(replaced, root + "/a")).isInstanceOf(NotFound.class);
  }
}
