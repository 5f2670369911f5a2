package dev.confine.bwrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The construction checks (§10.1 steps 1 to 5), in the seed's order. */
class BwrapSettingsTest {
  @TempDir Path temp;

  private Path base;
  private Path root;
  private FakeBwrap fake;
  private String path;

  @BeforeEach
  void setUp() throws IOException {
    base = temp.toRealPath();
    root = Files.createDirectory(base.resolve("root"));
    fake = FakeBwrap.create(base);
    path = "/nonexistent-dir:" + fake.dir();
  }

  private BwrapSettings resolve(String rootDir, String binary, String... writable) {
    return BwrapSettings.resolve(rootDir, binary, Arrays.asList(writable), List.of(), path);
  }

  private static void assertFails(ThrowingCallable call, Kind kind, String message) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            SandboxException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(kind);
              assertThat(e.getMessage()).isEqualTo(message);
            });
  }

  private Path file(String name, String permissions) throws IOException {
    Path f = Files.writeString(base.resolve(name), "#!/bin/sh\nexit 0\n");
    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(permissions));
    return f;
  }

  /** {@code p} relative to this JVM's working directory (so it holds a '/', and is relative). */
  private static String relative(Path p) {
    return Path.of("").toAbsolutePath().relativize(p).toString();
  }

  // ---- step 1: extra flags, before anything else ----

  @Test
  void extraFlagsAreCheckedFirstAndKeptInOrder() {
    assertFails(
        () -> BwrapSettings.resolve("", "/no/such/bwrap", List.of(), List.of("--bind"), null),
        Kind.VALIDATION,
        "sandbox: bwrap: extra flag \"--bind\" can weaken sandbox enforcement; policy flags are"
            + " owned by ExecOptions");
    BwrapSettings s =
        BwrapSettings.resolve(
            root.toString(), null, List.of(), List.of("--level-prefix", "--info-fd=3"), path);
    assertThat(s.extraFlags()).containsExactly("--level-prefix", "--info-fd=3");
  }

  @Test
  void aNullExtraFlagIsRefused() {
    assertFails(
        () ->
            BwrapSettings.resolve(
                root.toString(), null, List.of(), Arrays.asList("--level-prefix", null), path),
        Kind.VALIDATION,
        "sandbox: bwrap: extra flag 1 is null");
  }

  @Test
  void nullListsAreEmpty() {
    BwrapSettings s = BwrapSettings.resolve(root.toString(), null, null, null, path);
    assertThat(s.writablePaths()).isEmpty();
    assertThat(s.extraFlags()).isEmpty();
  }

  // ---- step 2: the binary ----

  @Test
  void withoutABinaryBwrapIsLookedUpOnThePath() {
    assertThat(resolve(root.toString(), null).binary()).isEqualTo(fake.binary());
    assertThat(resolve(root.toString(), "").binary()).isEqualTo(fake.binary());
  }

  @Test
  void theFirstExecutableOnThePathWins() throws IOException {
    Path dirNamedBwrap = Files.createDirectories(base.resolve("a/bwrap"));
    Path plain = Files.createDirectories(base.resolve("b"));
    Files.setPosixFilePermissions(
        Files.writeString(plain.resolve("bwrap"), "x"),
        PosixFilePermissions.fromString("rw-r--r--"));
    FakeBwrap second = FakeBwrap.create(Files.createDirectories(base.resolve("c")));
    String search = dirNamedBwrap.getParent() + ":" + plain + ":" + second.dir() + ":" + fake.dir();
    assertThat(BwrapSettings.resolve(root.toString(), null, List.of(), List.of(), search).binary())
        .isEqualTo(second.binary());
  }

  @Test
  void bwrapMissingFromThePathIsNotAvailableWithTheInstallHint() {
    String message =
        "sandbox: bwrap: binary not found on PATH; install bubblewrap or use binary(path)";
    for (String search : new String[] {"/nonexistent-dir", "", null}) {
      assertFails(
          () -> BwrapSettings.resolve(root.toString(), null, List.of(), List.of(), search),
          Kind.NOT_AVAILABLE,
          message);
    }
  }

  @Test
  void emptyAndRelativePathEntriesAreNeverSearched() {
    String search = ":" + relative(fake.dir()) + ":.";
    assertThat(relative(fake.dir())).doesNotStartWith("/");
    assertThatThrownBy(
            () -> BwrapSettings.resolve(root.toString(), null, List.of(), List.of(), search))
        .hasMessageContaining("binary not found on PATH");
  }

  @Test
  void aGivenBinaryIsKeptAsGiven() {
    assertThat(resolve(root.toString(), fake.binary().toString()).binary())
        .isEqualTo(fake.binary());
  }

  @Test
  void aGivenRelativeBinaryIsMadeAbsolute() {
    String rel = relative(fake.binary());
    assertThat(rel).contains("/").doesNotStartWith("/");
    assertThat(resolve(root.toString(), rel).binary()).isEqualTo(fake.binary());
  }

  @Test
  void aGivenNameWithoutASlashIsLookedUpOnThePathAsGoDoes() {
    assertThat(resolve(root.toString(), "bwrap").binary()).isEqualTo(fake.binary());
    assertFails(
        () -> resolve(root.toString(), "bwrap-nonexistent"),
        Kind.NOT_AVAILABLE,
        "sandbox: bwrap: binary \"bwrap-nonexistent\" not executable: not found on PATH");
  }

  @Test
  void aGivenFileWithoutExecutePermissionIsNotAvailable() throws IOException {
    Path f = file("not-executable", "rw-r--r--");
    assertFails(
        () -> resolve(root.toString(), f.toString()),
        Kind.NOT_AVAILABLE,
        "sandbox: bwrap: binary \"" + f + "\" not executable: permission denied");
  }

  @Test
  void aGivenMissingFileOrDirectoryIsNotAvailable() {
    Path missing = base.resolve("missing");
    assertFails(
        () -> resolve(root.toString(), missing.toString()),
        Kind.NOT_AVAILABLE,
        "sandbox: bwrap: binary \"" + missing + "\" not executable: no such file or directory");
    assertFails(
        () -> resolve(root.toString(), root.toString()),
        Kind.NOT_AVAILABLE,
        "sandbox: bwrap: binary \"" + root + "\" not executable: is a directory");
  }

  @Test
  void theBinaryInTheMessageIsQuotedAsGoQuotesIt() {
    assertFails(
        () -> resolve(root.toString(), "/no/such\n\"bwrap\""),
        Kind.NOT_AVAILABLE,
        "sandbox: bwrap: binary \"/no/such\\n\\\"bwrap\\\"\" not executable: no such file or"
            + " directory");
  }

  @Test
  void theBinaryIsCheckedBeforeTheRoot() {
    assertThatThrownBy(() -> resolve("", "/no/such/bwrap"))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_AVAILABLE));
  }

  // ---- step 3: the root ----

  @Test
  void theRootIsAbsoluteAndSymlinkResolved() throws IOException {
    Path link = Files.createSymbolicLink(base.resolve("link"), root);
    assertThat(resolve(link.toString(), null).root()).isEqualTo(root);
    assertThat(resolve(relative(root), null).root()).isEqualTo(root);
    assertThat(resolve(root + "/./sub/..", null).root()).isEqualTo(root);
  }

  @Test
  void aRootThatDoesNotExistStaysAbsoluteAndNormalised() {
    assertThat(resolve(base + "/missing/./x/..", null).root()).isEqualTo(base.resolve("missing"));
  }

  @Test
  void anEmptyRootIsRefused() {
    assertFails(
        () -> resolve("", null), Kind.VALIDATION, "sandbox: bwrap: runner root must be set");
    assertFails(
        () -> resolve(null, null), Kind.VALIDATION, "sandbox: bwrap: runner root must be set");
  }

  @Test
  void aRootThatIsNoPathIsValidation() {
    assertThatThrownBy(() -> resolve("/a\0b", null))
        .isInstanceOfSatisfying(
            SandboxException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(Kind.VALIDATION);
              assertThat(e.getMessage()).startsWith("sandbox: bwrap: resolve rootDir: ");
            });
  }

  @Test
  void theRootIsCheckedBeforeTheWritablePaths() {
    assertFails(
        () -> resolve("", null, "/no/such/path"),
        Kind.VALIDATION,
        "sandbox: bwrap: runner root must be set");
  }

  // ---- step 4: the writable paths ----

  @Test
  void writablePathsAreAbsoluteSymlinkResolvedAndInOrder() throws IOException {
    Path a = Files.createDirectory(base.resolve("a"));
    Path b = Files.createDirectory(base.resolve("b"));
    Path linkToB = Files.createSymbolicLink(base.resolve("to-b"), b);
    assertThat(resolve(root.toString(), null, linkToB.toString(), relative(a)).writablePaths())
        .containsExactly(b.toString(), a.toString());
  }

  @Test
  void duplicatesAndTheRootAreDroppedKeepingTheFirst() throws IOException {
    Path a = Files.createDirectory(base.resolve("a"));
    Path b = Files.createDirectory(base.resolve("b"));
    Path linkToA = Files.createSymbolicLink(base.resolve("to-a"), a);
    Path linkToRoot = Files.createSymbolicLink(base.resolve("to-root"), root);
    assertThat(
            resolve(
                    root.toString(),
                    null,
                    a.toString(),
                    root.toString(),
                    b.toString(),
                    linkToA.toString(),
                    linkToRoot.toString(),
                    a + "/.",
                    b.toString())
                .writablePaths())
        .containsExactly(a.toString(), b.toString());
  }

  @Test
  void aWritableFileIsKept() throws IOException {
    Path f = file("some-file", "rw-r--r--");
    assertThat(resolve(root.toString(), null, f.toString()).writablePaths())
        .containsExactly(f.toString());
  }

  @Test
  void aWritablePathMustExist() throws IOException {
    Path missing = base.resolve("missing");
    assertFails(
        () -> resolve(root.toString(), null, missing.toString()),
        Kind.VALIDATION,
        "sandbox: bwrap: writable path \"" + missing + "\" must exist: no such file or directory");
    Path dangling = Files.createSymbolicLink(base.resolve("dangling"), missing);
    assertFails(
        () -> resolve(root.toString(), null, dangling.toString()),
        Kind.VALIDATION,
        "sandbox: bwrap: writable path \"" + dangling + "\" must exist: no such file or directory");
  }

  @Test
  void theWritablePathInTheMessageIsAsGivenAndQuoted() {
    String given = "relative/\tmissing";
    assertFails(
        () -> resolve(root.toString(), null, given),
        Kind.VALIDATION,
        "sandbox: bwrap: writable path \"relative/\\tmissing\" must exist: no such file or"
            + " directory");
  }

  @Test
  void anEmptyWritablePathIsRefused() {
    assertFails(
        () -> resolve(root.toString(), null, ""),
        Kind.VALIDATION,
        "sandbox: bwrap: empty writable path");
    assertFails(
        () -> resolve(root.toString(), null, (String) null),
        Kind.VALIDATION,
        "sandbox: bwrap: empty writable path");
  }

  // ---- step 5: the default capture cap ----

  @Test
  void theDefaultCaptureCapIsTenMebibytes() {
    assertThat(resolve(root.toString(), null).defaultMaxOutputBytes()).isEqualTo(10L << 20);
  }

  @Test
  void theSettingsAreImmutable() throws IOException {
    Path a = Files.createDirectory(base.resolve("a"));
    BwrapSettings s = resolve(root.toString(), null, a.toString());
    assertThatThrownBy(() -> s.writablePaths().add("/x"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> s.extraFlags().add("--x"))
        .isInstanceOf(UnsupportedOperationException.class);
  }
}
