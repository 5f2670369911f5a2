package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ExecPredicateTest {
  @TempDir Path temp;

  private Path base;
  private Path root;
  private Path outside;

  @BeforeEach
  void setUp() throws IOException {
    base = temp.toRealPath();
    root = Files.createDirectory(base.resolve("root"));
    outside = Files.createDirectory(base.resolve("outside"));
  }

  private static ExecRequest command(String command) {
    return ExecRequest.of(command, List.of("-rf", "x"), null);
  }

  private static ExecRequest inWorkDir(String workDir) {
    return ExecRequest.of("ls", List.of(), ExecOptions.builder().workDir(workDir).build());
  }

  private static ExecRequest withNet(NetPolicy net) {
    return ExecRequest.of("curl", List.of(), ExecOptions.builder().net(net).build());
  }

  // ---- commandPatterns ----

  @ParameterizedTest(name = "{0} -> base {1}")
  @CsvSource({
    "rm, rm",
    "/bin/rm, rm",
    "./rm, rm",
    "rm/, rm",
    "/usr/bin/rm//, rm",
    "sub/dir/rm, rm"
  })
  void commandPatternsMatchTheBaseName(String command, String base) {
    assertThat(ExecPredicate.commandPatterns("rm").match(command(command)))
        .contains("command \"" + base + "\" matches sensitive pattern \"rm\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"rmdir", "/usr/bin/rmdir", "/bin/rm/x", "xrm", "/rm.sh", "r"})
  void commandPatternsDoNotMatchOtherNames(String command) {
    assertThat(ExecPredicate.commandPatterns("rm").match(command(command))).isEmpty();
  }

  @Test
  void globPatternsApplyToTheBaseName() {
    ExecPredicate p = ExecPredicate.commandPatterns("mkfs*", "d?", "[ck]ill");
    assertThat(p.match(command("/sbin/mkfs.ext4")))
        .contains("command \"mkfs.ext4\" matches sensitive pattern \"mkfs*\"");
    assertThat(p.match(command("dd"))).contains("command \"dd\" matches sensitive pattern \"d?\"");
    assertThat(p.match(command("/bin/kill")))
        .contains("command \"kill\" matches sensitive pattern \"[ck]ill\"");
    assertThat(p.match(command("ddd"))).isEmpty();
    assertThat(p.match(command("pkill"))).isEmpty();
  }

  @Test
  void patternsAreNotMatchedAgainstTheDirectory() {
    // "*" does not match '/', and the pattern only sees the base name anyway.
    ExecPredicate p = ExecPredicate.commandPatterns("/bin/*", "bin");
    assertThat(p.match(command("/bin/rm"))).isEmpty();
    assertThat(p.match(command("/bin/ls"))).isEmpty();
  }

  @Test
  void firstMatchingPatternWins() {
    ExecPredicate p = ExecPredicate.commandPatterns("nope", "r*", "rm", "*");
    assertThat(p.match(command("/bin/rm")))
        .contains("command \"rm\" matches sensitive pattern \"r*\"");
    assertThat(p.match(command("ls"))).contains("command \"ls\" matches sensitive pattern \"*\"");
  }

  @Test
  void noPatternsNeverMatch() {
    ExecPredicate p = ExecPredicate.commandPatterns();
    assertThat(p.match(command("rm"))).isEmpty();
    assertThat(p.match(command("/"))).isEmpty();
  }

  @Test
  void malformedPatternNeverMatchesButLaterPatternsStillApply() {
    ExecPredicate p = ExecPredicate.commandPatterns("[", "rm[", "r?");
    assertThat(p.match(command("["))).isEmpty();
    assertThat(p.match(command("rm["))).isEmpty();
    assertThat(p.match(command("rm"))).contains("command \"rm\" matches sensitive pattern \"r?\"");
  }

  @Test
  void rootCommandHasBaseNameSlash() {
    ExecPredicate p = ExecPredicate.commandPatterns("/");
    assertThat(p.match(command("///"))).contains("command \"/\" matches sensitive pattern \"/\"");
    assertThat(p.match(command("/bin/"))).isEmpty();
  }

  @Test
  void reasonQuotesSpecialCharacters() {
    ExecPredicate p = ExecPredicate.commandPatterns("*");
    assertThat(p.match(command("a\"b\tc")))
        .contains("command \"a\\\"b\\tc\" matches sensitive pattern \"*\"");
  }

  @Test
  void patternsArrayIsCopiedAtConstruction() {
    String[] patterns = {"rm"};
    ExecPredicate p = ExecPredicate.commandPatterns(patterns);
    patterns[0] = "ls";
    assertThat(p.match(command("rm"))).isPresent();
    assertThat(p.match(command("ls"))).isEmpty();
  }

  // ---- interactive ----

  @Test
  void interactiveMatchesOnlyTty() {
    ExecPredicate p = ExecPredicate.interactive();
    assertThat(p.match(new ExecRequest("sh", List.of(), null, true)))
        .contains("interactive TTY session start");
    assertThat(p.match(new ExecRequest("sh", List.of(), null, false))).isEmpty();
    assertThat(p.match(command("rm"))).isEmpty();
  }

  // ---- netNonDefault ----

  @Test
  void netNonDefaultIgnoresDefault() {
    ExecPredicate p = ExecPredicate.netNonDefault();
    assertThat(p.match(withNet(NetPolicy.defaults()))).isEmpty();
    assertThat(p.match(command("curl"))).isEmpty();
  }

  @Test
  void netNonDefaultMatchesOtherModesAndNamesThem() {
    ExecPredicate p = ExecPredicate.netNonDefault();
    assertThat(p.match(withNet(NetPolicy.denyAll())))
        .contains("non-default network policy requested (mode DENY_ALL = 1)");
    assertThat(p.match(withNet(NetPolicy.allowList())))
        .contains("non-default network policy requested (mode ALLOW_LIST = 2)");
    assertThat(p.match(withNet(NetPolicy.proxy("http://proxy:3128"))))
        .contains("non-default network policy requested (mode PROXY = 3)");
  }

  // ---- workDirOutsideRoot ----

  @ParameterizedTest
  @ValueSource(strings = {"", "sub", "../../x", "..", "../outside", "./../../etc"})
  void emptyAndRelativeWorkDirsNeverMatch(String workDir) {
    assertThat(ExecPredicate.workDirOutsideRoot(root.toString()).match(inWorkDir(workDir)))
        .isEmpty();
  }

  @Test
  void absoluteWorkDirInsideRootDoesNotMatch() throws IOException {
    Path sub = Files.createDirectories(root.resolve("a/b"));
    ExecPredicate p = ExecPredicate.workDirOutsideRoot(root.toString());
    assertThat(p.match(inWorkDir(root.toString()))).isEmpty();
    assertThat(p.match(inWorkDir(sub.toString()))).isEmpty();
    assertThat(p.match(inWorkDir(root + "/a/../a/b/"))).isEmpty();
  }

  @Test
  void absoluteWorkDirOutsideRootMatches() {
    ExecPredicate p = ExecPredicate.workDirOutsideRoot(root.toString());
    assertThat(p.match(inWorkDir(outside.toString())))
        .contains("workdir \"" + outside + "\" resolves outside root \"" + root + "\"");
    assertThat(p.match(inWorkDir("/tmp")))
        .contains("workdir \"/tmp\" resolves outside root \"" + root + "\"");
    assertThat(p.match(inWorkDir(root + "/../outside")))
        .contains("workdir \"" + root + "/../outside\" resolves outside root \"" + root + "\"");
  }

  @Test
  void anAbsoluteWorkDirThatIsNotUtf8IsJudgedByItsTextAndNeverThrows() {
    String raw = ByteStrings.decode(new byte[] {(byte) 0xff, 'x'});
    ExecPredicate p = ExecPredicate.workDirOutsideRoot(root.toString());
    assertThat(p.match(inWorkDir(root + "/" + raw))).isEmpty();
    assertThat(p.match(inWorkDir(root + "/a/" + raw + "/b"))).isEmpty();
    assertThat(p.match(inWorkDir(outside + "/" + raw))).isPresent();
    assertThat(p.match(inWorkDir(root + raw))).isPresent();
    assertThat(p.match(inWorkDir(root + "/../" + raw))).isPresent();
    assertThat(p.match(inWorkDir(raw))).isEmpty(); // relative: the backend confines it
  }

  @Test
  void siblingWithRootNameAsPrefixMatches() throws IOException {
    Path rootx = Files.createDirectory(base.resolve("rootx"));
    ExecPredicate p = ExecPredicate.workDirOutsideRoot(root.toString());
    assertThat(p.match(inWorkDir(rootx.toString())))
        .contains("workdir \"" + rootx + "\" resolves outside root \"" + root + "\"");
  }

  @Test
  void symlinkInsideRootPointingOutsideMatches() throws IOException {
    Path link = Files.createSymbolicLink(root.resolve("out"), outside);
    Path dangling = Files.createSymbolicLink(root.resolve("later"), base.resolve("nothing"));
    ExecPredicate p = ExecPredicate.workDirOutsideRoot(root.toString());
    assertThat(p.match(inWorkDir(link.toString())))
        .contains("workdir \"" + link + "\" resolves outside root \"" + root + "\"");
    assertThat(p.match(inWorkDir(link + "/missing"))).isPresent();
    assertThat(p.match(inWorkDir(dangling.toString()))).isPresent();
  }

  @Test
  void symlinkInsideRootPointingInsideDoesNotMatch() throws IOException {
    Path target = Files.createDirectory(root.resolve("target"));
    Path link = Files.createSymbolicLink(root.resolve("in"), target);
    assertThat(ExecPredicate.workDirOutsideRoot(root.toString()).match(inWorkDir(link.toString())))
        .isEmpty();
  }

  @Test
  void rootGivenThroughSymlinkIsResolvedAtConstruction() throws IOException {
    Path alias = Files.createSymbolicLink(base.resolve("alias"), root);
    Path sub = Files.createDirectory(root.resolve("sub"));
    ExecPredicate p = ExecPredicate.workDirOutsideRoot(alias.toString());
    assertThat(p.match(inWorkDir(sub.toString()))).isEmpty();
    assertThat(p.match(inWorkDir(alias + "/sub"))).isEmpty();
    assertThat(p.match(inWorkDir(outside.toString())))
        .contains("workdir \"" + outside + "\" resolves outside root \"" + root + "\"");

    // Re-pointing the link later does not change the predicate's root.
    Files.delete(alias);
    Files.createSymbolicLink(alias, outside);
    assertThat(p.match(inWorkDir(sub.toString()))).isEmpty();
    assertThat(p.match(inWorkDir(outside.toString()))).isPresent();
  }

  @Test
  void workDirWithMissingTailUnderRootDoesNotMatch() {
    ExecPredicate p = ExecPredicate.workDirOutsideRoot(root.toString());
    assertThat(p.match(inWorkDir(root + "/missing/deeper"))).isEmpty();
    assertThat(p.match(inWorkDir(outside + "/missing/deeper"))).isPresent();
  }

  @Test
  void nonExistentRootIsUsedAsAbsoluteNormalisedPath() {
    String missingRoot = base + "/no/./such/../root";
    ExecPredicate p = ExecPredicate.workDirOutsideRoot(missingRoot);
    assertThat(p.match(inWorkDir(base + "/no/root/x"))).isEmpty();
    assertThat(p.match(inWorkDir(base + "/no/rootx")))
        .contains(
            "workdir \"" + base + "/no/rootx\" resolves outside root \"" + base + "/no/root\"");
  }

  @Test
  void resolutionErrorFallsBackToTheCleanedPath() throws IOException {
    Files.createSymbolicLink(root.resolve("loop"), Path.of("loop"));
    Path other = Files.createDirectory(outside.resolve("o"));
    Files.createSymbolicLink(other.resolve("loop"), Path.of("loop"));
    ExecPredicate p = ExecPredicate.workDirOutsideRoot(root.toString());
    assertThat(p.match(inWorkDir(root + "/loop/x"))).isEmpty();
    assertThat(p.match(inWorkDir(other + "/loop/x"))).isPresent();
  }

  @Test
  void slashRootContainsEverything() {
    ExecPredicate p = ExecPredicate.workDirOutsideRoot("/");
    assertThat(p.match(inWorkDir("/tmp"))).isEmpty();
    assertThat(p.match(inWorkDir(outside.toString()))).isEmpty();
  }

  // ---- predicates see an immutable request ----

  @Test
  void predicatesCannotMutateTheRequest() {
    byte[] stdin = "secret".getBytes(StandardCharsets.UTF_8);
    ExecRequest request =
        ExecRequest.of(
            "rm", List.of("-rf", "/"), ExecOptions.builder().stdin(stdin).workDir("w").build());
    AtomicReference<ExecRequest> seen = new AtomicReference<>();
    ExecPredicate mutating =
        r -> {
          seen.set(r);
          r.options().stdin()[0] = 'X';
          return Optional.empty();
        };

    assertThat(mutating.match(request)).isEmpty();
    ExecRequest r = seen.get();
    assertThatThrownBy(() -> r.args().add("x")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> r.args().set(0, "x"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> r.args().clear()).isInstanceOf(UnsupportedOperationException.class);
    assertThat(r.args()).containsExactly("-rf", "/");
    assertThat(r.options().stdin()).isEqualTo("secret".getBytes(StandardCharsets.UTF_8));
    assertThat(r.options().stdin()).isNotSameAs(r.options().stdin());
    stdin[0] = 'Y';
    assertThat(request.options().stdin()).isEqualTo("secret".getBytes(StandardCharsets.UTF_8));
  }
}
