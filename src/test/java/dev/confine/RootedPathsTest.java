package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RootedPathsTest {
  @TempDir Path temp;

  /** The real (symlink-free) temp directory. */
  private Path base;

  /** base/root, an existing directory used as the runner root. */
  private Path root;

  /** base/outside, an existing directory that is not beneath the root. */
  private Path outside;

  @BeforeEach
  void setUp() throws IOException {
    base = temp.toRealPath();
    root = Files.createDirectory(base.resolve("root"));
    outside = Files.createDirectory(base.resolve("outside"));
  }

  private static void assertTraversal(Path root, String workDir) {
    assertThatThrownBy(() -> RootedPaths.resolveWorkDir(root, workDir))
        .isInstanceOfSatisfying(
            PathTraversalException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(SandboxException.Kind.FORBIDDEN);
              assertThat(e.getMessage())
                  .startsWith("sandbox: path traversal denied")
                  .isEqualTo(
                      "sandbox: path traversal denied: workdir \""
                          + workDir
                          + "\" escapes root \""
                          + root
                          + "\"");
              assertThat(e.path()).isEqualTo(workDir);
              assertThat(e.root()).isEqualTo(root.toString());
            });
  }

  private static void assertResolveError(Path root, String workDir) {
    assertThatThrownBy(() -> RootedPaths.resolveWorkDir(root, workDir))
        .isExactlyInstanceOf(SandboxException.class)
        .satisfies(
            e -> {
              SandboxException se = (SandboxException) e;
              assertThat(se.kind()).isEqualTo(SandboxException.Kind.INTERNAL);
              assertThat(se.getMessage()).startsWith("sandbox: resolve workdir: ");
              assertThat(se.getCause()).isInstanceOf(IOException.class);
            });
  }

  // ---- resolveRoot ----

  @Test
  void resolveRootOfExistingDirectoryIsAbsoluteAndReal() {
    assertThat(RootedPaths.resolveRoot(root.toString())).isEqualTo(root);
  }

  @Test
  void resolveRootFollowsSymlinks() throws IOException {
    Path link = Files.createSymbolicLink(base.resolve("rootlink"), root);
    assertThat(RootedPaths.resolveRoot(link.toString())).isEqualTo(root);
    Path relLink = Files.createSymbolicLink(base.resolve("rellink"), Path.of("root"));
    assertThat(RootedPaths.resolveRoot(relLink + "/")).isEqualTo(root);
  }

  @Test
  void resolveRootOfNonExistentDirectoryIsAbsoluteAndNormalised() {
    String dir = root + "/a/./b/../missing";
    Path resolved = RootedPaths.resolveRoot(dir);
    assertThat(resolved).isEqualTo(root.resolve("a/missing"));
    assertThat(resolved.isAbsolute()).isTrue();
  }

  @Test
  void resolveRootOfRelativeDirectoryIsMadeAbsolute() {
    Path cwd = Path.of("").toAbsolutePath();
    Path resolved = RootedPaths.resolveRoot("no-such-dir-for-confine/x/..");
    assertThat(resolved).isEqualTo(cwd.resolve("no-such-dir-for-confine"));
  }

  // ---- resolveWorkDir: allowed ----

  @Test
  void emptyOrNullWorkDirIsTheRoot() {
    assertThat(RootedPaths.resolveWorkDir(root, "")).isSameAs(root);
    assertThat(RootedPaths.resolveWorkDir(root, null)).isSameAs(root);
  }

  @Test
  void relativeWorkDirIsJoinedOntoTheRoot() throws IOException {
    Files.createDirectory(root.resolve("sub"));
    assertThat(RootedPaths.resolveWorkDir(root, "sub")).isEqualTo(root.resolve("sub"));
  }

  @Test
  void absoluteWorkDirInsideIsReturnedAsIs() throws IOException {
    Path sub = Files.createDirectories(root.resolve("sub/deeper"));
    assertThat(RootedPaths.resolveWorkDir(root, sub.toString())).isEqualTo(sub);
    assertThat(RootedPaths.resolveWorkDir(root, root.toString())).isEqualTo(root);
  }

  @Test
  void workDirIsNormalisedLexically() throws IOException {
    Files.createDirectory(root.resolve("b"));
    assertThat(RootedPaths.resolveWorkDir(root, "a/../b")).isEqualTo(root.resolve("b"));
    assertThat(RootedPaths.resolveWorkDir(root, "./b/.")).isEqualTo(root.resolve("b"));
    assertThat(RootedPaths.resolveWorkDir(root, root + "/x/../b")).isEqualTo(root.resolve("b"));
  }

  @Test
  void nonExistentSubdirectoryInsideRootPasses() {
    assertThat(RootedPaths.resolveWorkDir(root, "missing/deeper"))
        .isEqualTo(root.resolve("missing/deeper"));
    assertThat(RootedPaths.resolveWorkDir(root, root + "/missing/deeper"))
        .isEqualTo(root.resolve("missing/deeper"));
  }

  @Test
  void symlinkInsidePointingInsideIsAllowedAndReturnedUnresolved() throws IOException {
    Path target = Files.createDirectories(root.resolve("real/dir"));
    Path link = Files.createSymbolicLink(root.resolve("link"), target);
    Path relLink = Files.createSymbolicLink(root.resolve("rel"), Path.of("real/dir"));

    assertThat(RootedPaths.resolveWorkDir(root, "link")).isEqualTo(link);
    assertThat(RootedPaths.resolveWorkDir(root, link.toString())).isEqualTo(link);
    assertThat(RootedPaths.resolveWorkDir(root, "rel/missing"))
        .isEqualTo(root.resolve("rel/missing"));
  }

  @Test
  void rootSymlinkItselfIsAllowed() throws IOException {
    Path link = Files.createSymbolicLink(root.resolve("self"), root);
    assertThat(RootedPaths.resolveWorkDir(root, "self")).isEqualTo(link);
  }

  @Test
  void rootSlashContainsEverything() {
    Path slash = Path.of("/");
    assertThat(RootedPaths.resolveWorkDir(slash, "/tmp")).isEqualTo(Path.of("/tmp"));
    assertThat(RootedPaths.resolveWorkDir(slash, "tmp")).isEqualTo(Path.of("/tmp"));
    assertThat(RootedPaths.resolveWorkDir(slash, "/")).isEqualTo(slash);
    assertThat(RootedPaths.resolveWorkDir(slash, outside.toString())).isEqualTo(outside);
  }

  // ---- resolveWorkDir: traversal ----

  @Test
  void relativeEscapeIsTraversal() {
    assertTraversal(root, "../../../tmp");
    assertTraversal(root, "..");
    assertTraversal(root, "sub/../../outside");
  }

  @Test
  void absoluteEscapeIsTraversal() {
    assertTraversal(root, "/tmp");
    assertTraversal(root, outside.toString());
    assertTraversal(root, base.toString());
    assertTraversal(root, "/");
  }

  @Test
  void symlinkInsidePointingOutsideIsTraversal() throws IOException {
    Files.createSymbolicLink(root.resolve("out"), outside);
    assertTraversal(root, "out");
    assertTraversal(root, root + "/out");
    assertTraversal(root, "out/missing/deeper");
  }

  @Test
  void danglingSymlinkPointingOutsideIsTraversal() throws IOException {
    Path notYet = base.resolve("not-yet");
    Files.createSymbolicLink(root.resolve("dangling"), notYet);
    assertThat(Files.exists(notYet)).isFalse();
    assertTraversal(root, "dangling");
    assertTraversal(root, "dangling/sub");
  }

  @Test
  void danglingSymlinkPointingInsideIsAllowed() throws IOException {
    Path link = Files.createSymbolicLink(root.resolve("later"), root.resolve("not-yet"));
    assertThat(RootedPaths.resolveWorkDir(root, "later")).isEqualTo(link);
  }

  @Test
  void symlinkChainEndingOutsideIsTraversal() throws IOException {
    Files.createSymbolicLink(root.resolve("c"), outside);
    Files.createSymbolicLink(root.resolve("b"), Path.of("c"));
    Files.createSymbolicLink(root.resolve("a"), root.resolve("b"));
    assertTraversal(root, "a");
    assertTraversal(root, "a/x");
  }

  @Test
  void symlinkChainEndingInsideIsAllowed() throws IOException {
    Files.createDirectory(root.resolve("end"));
    Files.createSymbolicLink(root.resolve("c"), Path.of("end"));
    Files.createSymbolicLink(root.resolve("b"), Path.of("c"));
    Files.createSymbolicLink(root.resolve("a"), root.resolve("b"));
    assertThat(RootedPaths.resolveWorkDir(root, "a/x")).isEqualTo(root.resolve("a/x"));
  }

  @Test
  void relativeSymlinkTargetEscapingWithDotDotIsTraversal() throws IOException {
    Files.createDirectory(root.resolve("sub"));
    Files.createSymbolicLink(root.resolve("sub/up"), Path.of("../../outside"));
    assertTraversal(root, "sub/up");
    // the same with a target that does not exist yet
    Files.createSymbolicLink(root.resolve("sub/up2"), Path.of("../../nothing-here"));
    assertTraversal(root, "sub/up2");
  }

  @Test
  void relativeSymlinkTargetWithDotDotStayingInsideIsAllowed() throws IOException {
    Files.createDirectories(root.resolve("sub"));
    Files.createDirectories(root.resolve("other"));
    Files.createSymbolicLink(root.resolve("sub/side"), Path.of("../other"));
    assertThat(RootedPaths.resolveWorkDir(root, "sub/side")).isEqualTo(root.resolve("sub/side"));
  }

  @Test
  void siblingWithRootNameAsPrefixIsTraversal() throws IOException {
    Path r = Files.createDirectory(base.resolve("r"));
    Path rr = Files.createDirectory(base.resolve("rr"));
    assertTraversal(r, rr.toString());
    assertTraversal(r, base + "/r-missing");
    assertTraversal(r, "../rr");
  }

  @Test
  void siblingWithRootNameAsPrefixIsTraversalForLexicalPaths() {
    assertTraversal(Path.of("/x/r"), "/x/rr");
    assertThat(RootedPaths.resolveWorkDir(Path.of("/x/r"), "/x/r/s")).isEqualTo(Path.of("/x/r/s"));
  }

  // ---- resolveWorkDir: I/O errors ----

  @Test
  void symlinkLoopIsAnInternalResolveError() throws IOException {
    Files.createSymbolicLink(root.resolve("loop1"), Path.of("loop2"));
    Files.createSymbolicLink(root.resolve("loop2"), Path.of("loop1"));
    Files.createSymbolicLink(root.resolve("self"), Path.of("self"));
    assertResolveError(root, "loop1");
    assertResolveError(root, "self/x");
  }

  @Test
  void pathThroughRegularFileIsAnInternalResolveError() throws IOException {
    Files.writeString(root.resolve("file"), "x");
    assertResolveError(root, "file/x");
    assertResolveError(root, "file/x/y");
    Files.createSymbolicLink(root.resolve("tofile"), Path.of("file"));
    assertResolveError(root, "tofile/x");
    Files.createSymbolicLink(root.resolve("via"), Path.of("file/../other"));
    assertResolveError(root, "via");
  }

  @Test
  void existingPrefixThroughRegularFileThrows() throws IOException {
    Path file = Files.writeString(root.resolve("file"), "x");
    assertThatThrownBy(() -> RootedPaths.resolveExistingPrefix(file.resolve("x")))
        .isInstanceOf(FileSystemException.class)
        .isNotInstanceOf(NoSuchFileException.class)
        .hasMessageContaining(file.resolve("x").toString());
    assertThat(RootedPaths.resolveExistingPrefix(file)).isEqualTo(file);
  }

  @Test
  void regularFileItselfPassesResolution() throws IOException {
    // Resolution only checks containment; a file as workdir fails later, at spawn.
    Path file = Files.writeString(root.resolve("file"), "x");
    assertThat(RootedPaths.resolveWorkDir(root, "file")).isEqualTo(file);
  }

  // ---- resolveExistingPrefix ----

  @Test
  void dotDotAfterSymlinkGoesToTheTargetsParent() throws IOException {
    Path dir2 = Files.createDirectories(base.resolve("dir1/dir2"));
    Path link = Files.createSymbolicLink(root.resolve("link"), dir2);
    assertThat(RootedPaths.resolveExistingPrefix(link.resolve("..")))
        .isEqualTo(base.resolve("dir1"));
    assertThat(RootedPaths.resolveExistingPrefix(link.resolve("../x/y")))
        .isEqualTo(base.resolve("dir1/x/y"));
  }

  @Test
  void existingPrefixResolvesSymlinksAndAppendsMissingTail() throws IOException {
    Files.createSymbolicLink(root.resolve("link"), outside);
    assertThat(RootedPaths.resolveExistingPrefix(root.resolve("link/missing/deeper")))
        .isEqualTo(outside.resolve("missing/deeper"));
    assertThat(RootedPaths.resolveExistingPrefix(root.resolve("./plain/./x")))
        .isEqualTo(root.resolve("plain/x"));
  }

  @Test
  void existingPrefixFollowsDanglingRelativeTargets() throws IOException {
    Files.createSymbolicLink(root.resolve("d"), Path.of("../outside/new"));
    assertThat(RootedPaths.resolveExistingPrefix(root.resolve("d/leaf")))
        .isEqualTo(outside.resolve("new/leaf"));
  }

  @Test
  void existingPrefixOfAbsoluteSymlinkTargetRestartsAtSlash() throws IOException {
    Files.createSymbolicLink(root.resolve("toslash"), Path.of("/"));
    assertThat(RootedPaths.resolveExistingPrefix(root.resolve("toslash"))).isEqualTo(Path.of("/"));
  }

  @Test
  void existingPrefixDotDotAtSlashStaysAtSlash() throws IOException {
    assertThat(RootedPaths.resolveExistingPrefix(Path.of("/../.."))).isEqualTo(Path.of("/"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"relative", "a/b", "", "../x"})
  void existingPrefixRejectsRelativePaths(String path) {
    assertThatThrownBy(() -> RootedPaths.resolveExistingPrefix(Path.of(path)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not absolute: " + path);
  }
}
