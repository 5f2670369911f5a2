package dev.confine.confined;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.confinement.Credentials;
import dev.confine.linux.confinement.Landlock;
import dev.confine.testing.ForkedJvm;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.RawBytes;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The confined runner's per-exec TMPDIRs ({@link ScratchDirectories}): taken and given back,
 * emptied without following anything an exec left (links out, a link in place of the directory,
 * fifos, sockets, read-only and deep trees), reused only when nothing of the exec can run, owned by
 * the user the children run as, removed at JVM exit, and what the next JVM removes of a JVM that
 * could not.
 *
 * <p>Runs as root and (CI) as an unprivileged user: what only root can do, or only a user without
 * root meets, is tagged so.
 */
@Tag("confinement")
@Timeout(120)
class ScratchDirectoriesTest {
  private static final Duration FORKED = Duration.ofSeconds(60);

  @TempDir Path tmp;
  private Path outside;
  private final List<Path> toRemove = new ArrayList<>();

  @BeforeEach
  void create() throws IOException {
    // What an exec's links point at: must survive every emptying.
    outside = Files.createDirectories(tmp.resolve("outside")).toRealPath();
    Files.writeString(outside.resolve("precious"), "keep me");
    Files.createDirectories(outside.resolve("sub"));
    Files.writeString(outside.resolve("sub/also-precious"), "keep me too");
  }

  private ScratchDirectories scratch(Credentials.User owner) {
    ScratchDirectories s = ScratchDirectories.create(owner);
    toRemove.add(s.parent());
    return s;
  }

  private ScratchDirectories scratch() {
    return scratch(null);
  }

  @AfterEach
  void removeParents() throws Exception {
    for (Path p : toRemove) {
      forceRemove(p);
    }
    assertThat(outside.resolve("precious")).hasContent("keep me");
    assertThat(outside.resolve("sub/also-precious")).hasContent("keep me too");
  }

  /** Removes {@code p} whatever it holds (read-only, deep): chmod and rm follow no link. */
  private static void forceRemove(Path p) throws Exception {
    if (Files.exists(p, NOFOLLOW_LINKS)) {
      run(p.getParent(), "chmod -R u+rwx \"$1\" 2>/dev/null; rm -rf \"$1\"", p.toString());
    }
    assertThat(p).doesNotExist();
  }

  /** Runs {@code script} with sh in {@code dir}, {@code $1}... the args; fails when it does. */
  private static String run(Path dir, String script, String... args) throws Exception {
    return runWith("sh", dir, script, args);
  }

  private static String runWith(String shell, Path dir, String script, String... args)
      throws Exception {
    List<String> command = new ArrayList<>(List.of(shell, "-c", script, shell));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as("sh -c %s: %s", script, out).isZero();
    return out;
  }

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static void assertEmptyDirectory(Path dir) throws IOException {
    assertThat(Files.isDirectory(dir, NOFOLLOW_LINKS)).as("%s is a directory", dir).isTrue();
    assertThat(names(dir)).as("left in %s", dir).isEmpty();
  }

  private static Set<PosixFilePermission> mode(Path p) throws IOException {
    return Files.getPosixFilePermissions(p, NOFOLLOW_LINKS);
  }

  /** This JVM's uid: the owner of its /proc directory (not of the /proc/self link, root's). */
  private static int myUid() throws IOException {
    return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
  }

  private static int uid(Path p) throws IOException {
    return (Integer) Files.getAttribute(p, "unix:uid", NOFOLLOW_LINKS);
  }

  // ---- take and give back

  @Test
  void theParentIsAFreshPrivateDirectoryNamedForThisJvm() throws IOException {
    Path parent = scratch().parent();
    Path tmpdir = Path.of(System.getProperty("java.io.tmpdir")).toRealPath();
    assertThat(parent.getParent()).isEqualTo(tmpdir);
    assertThat(parent.getFileName().toString())
        .startsWith("confine-scratch-" + ProcessHandle.current().pid() + "-");
    assertThat(mode(parent)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
    assertThat(uid(parent)).isEqualTo(myUid());
    assertThat(names(parent)).isEmpty();
    assertThat(scratch(null).parent()).as("a second runner's").isNotEqualTo(parent);
  }

  @Test
  void eachExecInFlightGetsItsOwnEmptyDirectory() throws IOException {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    Path b = s.take("b");
    assertThat(a).isNotEqualTo(b);
    assertThat(a.getParent()).isEqualTo(s.parent());
    assertThat(b.getParent()).isEqualTo(s.parent());
    assertEmptyDirectory(a);
    assertEmptyDirectory(b);
    assertThat(uid(a)).isEqualTo(uid(s.parent()));
  }

  @Test
  void aDirectoryGivenBackReusableIsEmptiedAndTakenNext() throws IOException {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    Path b = s.take("b");
    Files.createDirectories(a.resolve("x/y/z"));
    Files.writeString(a.resolve("x/y/z/file"), "data");
    Files.writeString(a.resolve(".hidden"), "data");
    Files.write(a.resolve("big"), new byte[1 << 20]);
    s.giveBack(b, true);
    s.giveBack(a, true);
    assertEmptyDirectory(a);
    assertEmptyDirectory(b);
    // The last one given back goes first (its inode is the warmest).
    assertThat(s.take("c")).isEqualTo(a);
    assertThat(s.take("d")).isEqualTo(b);
    assertThat(names(s.parent())).hasSize(2);
  }

  @Test
  void aDirectoryGivenBackNotReusableIsRemovedAndNeverHandedOutAgain() throws IOException {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    Files.writeString(a.resolve("file"), "data");
    s.giveBack(a, false);
    assertThat(a).doesNotExist();
    Path empty = s.take("b");
    s.giveBack(empty, false);
    assertThat(empty).doesNotExist();
    Path c = s.take("c");
    assertThat(c).isNotIn(a, empty);
    assertEmptyDirectory(c);
    assertThat(names(s.parent())).containsExactly(c.getFileName().toString());
  }

  @Test
  void aDirectoryTheExecRemovedIsNotHandedOutAgain() throws IOException {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    Files.delete(a);
    s.giveBack(a, true);
    Path b = s.take("b");
    assertThat(b).isNotEqualTo(a);
    assertEmptyDirectory(b);
  }

  @Test
  void takingFailsWithInternalWhenTheParentIsGone() throws IOException {
    ScratchDirectories s = scratch();
    Files.delete(s.parent());
    assertThatThrownBy(() -> s.take("the-cmd"))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.INTERNAL))
        .hasMessageContaining("the-cmd");
  }

  // ---- what an exec can leave behind

  @Test
  void linksThatLeadOutAreRemovedNotFollowed() throws Exception {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    Files.createSymbolicLink(a.resolve("to-dir"), outside);
    Files.createSymbolicLink(a.resolve("to-sub"), outside.resolve("sub"));
    Files.createSymbolicLink(a.resolve("to-file"), outside.resolve("precious"));
    Files.createSymbolicLink(a.resolve("dangling"), outside.resolve("nothing"));
    Files.createSymbolicLink(a.resolve("to-parent"), Path.of(".."));
    Files.createDirectories(a.resolve("deeper/still"));
    Files.createSymbolicLink(a.resolve("deeper/still/up"), Path.of("../../../.."));
    Files.createSymbolicLink(a.resolve("deeper/out"), outside);
    Files.createLink(a.resolve("hard-link"), outside.resolve("precious"));
    Path sibling = s.take("sibling");
    Files.writeString(sibling.resolve("in-use"), "another exec's");
    Files.createSymbolicLink(a.resolve("to-sibling"), sibling);
    s.giveBack(a, true);
    assertEmptyDirectory(a);
    assertThat(s.take("b")).isEqualTo(a);
    assertThat(names(outside)).containsExactly("precious", "sub");
    assertThat(sibling.resolve("in-use")).hasContent("another exec's");
  }

  @Test
  void aLinkPutInPlaceOfTheDirectoryIsRemovedAndTheDirectoryNotReused() throws IOException {
    ScratchDirectories s = scratch();
    for (boolean reusable : new boolean[] {true, false}) {
      Path a = s.take("a");
      Files.move(a, s.parent().resolve("moved-" + reusable));
      Files.createSymbolicLink(a, outside);
      s.giveBack(a, reusable);
      assertThat(Files.exists(a, NOFOLLOW_LINKS)).as("the link").isFalse();
      Path b = s.take("b");
      assertThat(b).isNotEqualTo(a);
      assertEmptyDirectory(b);
      s.giveBack(b, true);
    }
  }

  @Test
  void aFilePutInPlaceOfTheDirectoryIsRemovedAndTheNameNotReused() throws IOException {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    Files.delete(a);
    Files.writeString(a, "not a directory");
    s.giveBack(a, true);
    assertThat(Files.exists(a, NOFOLLOW_LINKS)).isFalse();
    Path b = s.take("b");
    assertThat(b).isNotEqualTo(a);
    assertEmptyDirectory(b);
  }

  @Test
  void fifosSocketsAndOddNamesAreRemovedWithoutBeingOpened() throws Exception {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    // A fifo nobody writes to: opening it to read would block the giveBack forever.
    run(a, "mkfifo fifo && mkdir d && mkfifo d/fifo");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(a.resolve("socket")));
    }
    RawBytes.sh(a, "mkdir \"$X\" && printf x > \"$X/$X\" && printf x > ' lead' && touch -- '-x'");
    Files.writeString(a.resolve("no-permissions"), "x");
    Files.setPosixFilePermissions(a.resolve("no-permissions"), Set.of());
    assertThat(names(a)).hasSize(7);
    s.giveBack(a, true);
    assertEmptyDirectory(a);
    assertThat(s.take("b")).isEqualTo(a);
  }

  @Test
  void aTreeWhosePathsAreLongerThanPathMaxIsEmptied() throws Exception {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    // 40 levels of 200-byte names: 8000 bytes, twice PATH_MAX; made relative, level by level
    // (bash's cd falls back to a relative chdir where dash's fails with ENAMETOOLONG).
    HostRequirements.requireProgram("bash");
    String name = "n".repeat(200);
    runWith(
        "bash",
        a,
        "i=0; while [ $i -lt 40 ]; do mkdir \"$1\" && cd \"$1\" && echo x > f || exit 1;"
            + " i=$((i+1)); done",
        name);
    s.giveBack(a, true);
    assertEmptyDirectory(a);
    assertThat(s.take("b")).isEqualTo(a);
  }

  /**
   * A chain of {@code depth} directories {@code d} in {@code dir}, with at its bottom a file, a
   * fifo nobody writes to, a link out and a read-only directory holding a file; the bottom.
   */
  private Path deepTree(Path dir, int depth) throws Exception {
    Path bottom = Files.createDirectories(dir.resolve("d/".repeat(depth)));
    Files.writeString(bottom.resolve("f"), "x");
    run(bottom, "mkfifo fifo && mkdir ro && echo x > ro/g && chmod 555 ro");
    Files.createSymbolicLink(bottom.resolve("out"), outside);
    return bottom;
  }

  @Test
  void aTreeOfAnyDepthIsEmptiedAndItsDirectoryReused() throws Exception {
    // Once, at most 64 levels were walked (each held an open directory) and the rest was left,
    // by the exit and the next JVM too. Directories are moved up into the trash instead.
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    deepTree(a, 300);
    Files.writeString(a.resolve("shallow"), "x");
    s.giveBack(a, true);
    assertEmptyDirectory(a);
    assertThat(s.take("b")).isEqualTo(a);
    Path c = s.take("c");
    deepTree(c, 300);
    s.giveBack(c, false);
    assertThat(c).doesNotExist();
    assertThat(names(s.parent())).containsExactly(a.getFileName().toString());
  }

  @Test
  @Tag("root")
  void readOnlyDirectoriesAndFilesAreEmptiedByRoot() throws Exception {
    HostRequirements.requireRoot();
    assertReadOnlyTreeIsEmptied();
  }

  @Test
  @Tag("unprivileged")
  void readOnlyDirectoriesAreEmptiedWithoutRoot() throws Exception {
    HostRequirements.require(!HostRequirements.isRoot(), "must run without root");
    assertReadOnlyTreeIsEmptied();
  }

  private void assertReadOnlyTreeIsEmptied() throws Exception {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    // As a Go module cache is: read-only directories with read-only files, and a directory the
    // exec can no longer even list.
    String readOnlyTree =
        "mkdir -p ro/sub && echo x > ro/f && echo x > ro/sub/g && chmod 444 ro/f ro/sub/g"
            + " && chmod 555 ro/sub ro && mkdir locked && echo x > locked/h && chmod 000 locked";
    run(a, readOnlyTree);
    s.giveBack(a, true);
    assertEmptyDirectory(a);
    assertThat(s.take("b")).isEqualTo(a);
    // Not reusable: removed all the same.
    Path c = s.take("c");
    run(c, readOnlyTree);
    s.giveBack(c, false);
    assertThat(c).doesNotExist();
  }

  // ---- who may use them

  @Test
  @Tag("root")
  void withAnOwnerEachDirectoryIsTheOwnersAndTheParentOnlyTraversable() throws Exception {
    HostRequirements.requireRoot();
    int nobody = ConfinedModes.NOBODY;
    ScratchDirectories s = scratch(new Credentials.User(nobody, nobody));
    Path parent = s.parent();
    assertThat(mode(parent)).isEqualTo(PosixFilePermissions.fromString("rwx--x--x"));
    assertThat(uid(parent)).isZero();
    Path a = s.take("a");
    assertThat(uid(a)).isEqualTo(nobody);
    assertThat(Files.getAttribute(a, "unix:gid", NOFOLLOW_LINKS)).isEqualTo(nobody);
    String asNobody = "setpriv --reuid=" + nobody + " --regid=" + nobody + " --clear-groups ";
    run(
        tmp,
        asNobody
            + "sh -c 'echo x > \"$1/mine\" && mkdir \"$1/d\" && echo y > \"$1/d/f\"'"
            + " sh "
            + a);
    run(tmp, "! " + asNobody + "touch \"$1/not-mine\" 2>/dev/null", parent.toString());
    run(tmp, "! " + asNobody + "ls \"$1\" >/dev/null 2>&1", parent.toString());
    // The owner's files are emptied by the JVM (root) and the directory stays the owner's.
    s.giveBack(a, true);
    assertEmptyDirectory(a);
    Path b = s.take("b");
    assertThat(b).isEqualTo(a);
    assertThat(uid(b)).isEqualTo(nobody);
  }

  @Test
  @Tag("root")
  void withAnOwnerNoOtherUserCanReadAnExecsDirectory() throws Exception {
    HostRequirements.requireRoot();
    int nobody = ConfinedModes.NOBODY;
    ScratchDirectories s = scratch(new Credentials.User(nobody, nobody));
    Path a = s.take("a");
    Files.writeString(a.resolve("secret"), "the child's");
    Files.setAttribute(a.resolve("secret"), "unix:uid", nobody, NOFOLLOW_LINKS);
    assertThat(mode(a))
        .doesNotContain(PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_EXECUTE);
    String another = "setpriv --reuid=12345 --regid=12345 --clear-groups ";
    run(tmp, "! " + another + "cat \"$1/secret\" 2>/dev/null", a.toString());
  }

  @Test
  void anExecsDirectoryIsMode0700WhateverTheUmask() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    for (String umask : List.of("000", "022", "777")) {
      Path tmpdir = Files.createDirectory(tmp.resolve("umask-" + umask)).toRealPath();
      String out =
          run(
              tmp,
              "umask " + umask + " && exec \"$@\"",
              java,
              "-Djava.io.tmpdir=" + tmpdir,
              "--enable-native-access=ALL-UNNAMED",
              "-cp",
              System.getProperty("java.class.path"),
              ScratchDirectoriesMain.class.getName(),
              "modes");
      assertThat(out).as("umask %s", umask).contains("exec=rwx------", "parent=rwx------");
    }
  }

  @Test
  void aModeTheExecGaveItsDirectoryIsNotHandedOn() throws Exception {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    Files.setPosixFilePermissions(a, PosixFilePermissions.fromString("rwxrwxrwx"));
    s.giveBack(a, true);
    assertThat(s.take("b")).isEqualTo(a);
    assertThat(mode(a)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
    // Read-only, with something in it: made writable again (through the open directory), emptied.
    Files.writeString(a.resolve("f"), "x");
    Files.setPosixFilePermissions(a, PosixFilePermissions.fromString("r-x------"));
    s.giveBack(a, true);
    assertEmptyDirectory(a);
    assertThat(s.take("c")).isEqualTo(a);
    assertThat(mode(a)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
  }

  @Test
  void namesAChildTookInAdvanceAreSkipped() throws Exception {
    ScratchDirectories s = scratch();
    // The names are predictable and the parent writable by the runner's children.
    Path parent = s.parent();
    Files.createDirectories(parent.resolve("exec-1/theirs"));
    Files.createSymbolicLink(parent.resolve("exec-2"), outside);
    Files.writeString(parent.resolve("exec-3"), "a file");
    Path a = s.take("a");
    assertThat(a.getFileName().toString()).isEqualTo("exec-4");
    assertEmptyDirectory(a);
    assertThat(mode(a)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
    assertThat(parent.resolve("exec-1/theirs")).isDirectory();
    assertThat(Files.isSymbolicLink(parent.resolve("exec-2"))).isTrue();
  }

  @Test
  void aDirectoryGivenBackTwiceIsHandedOutOnce() throws IOException {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    s.giveBack(a, true);
    s.giveBack(a, true);
    assertThat(s.take("b")).isEqualTo(a);
    assertThat(s.take("c")).isNotEqualTo(a);
  }

  @Test
  void withoutAnOwnerAnExecsDirectoryIsReachableOnlyByThisUser() throws IOException {
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    // Other users cannot even reach it: the parent is 0700.
    assertThat(mode(s.parent()))
        .doesNotContain(
            PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_EXECUTE,
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.OTHERS_READ);
    assertThat(uid(a)).isEqualTo(myUid());
  }

  // ---- what confined children can reach

  private static ExecOptions timeout() {
    return ExecOptions.builder().timeout(Duration.ofSeconds(60)).build();
  }

  @Test
  void aConfinedChildCanNeitherRenameNorReplaceTheParent() throws Exception {
    // Landlock protects the parent, not the sticky bit: this child runs as the parent's owner.
    HostRequirements.require(Landlock.availability());
    Path root = Files.createDirectory(tmp.resolve("root"));
    ConfinedRunner runner = ConfinedRunner.builder(root.toString()).rootless(true).build();
    String script =
        "p=${TMPDIR%/*}; echo x > \"$TMPDIR/f\" && echo wrote-inside;"
            + " [ \"$(stat -c %u \"$p\")\" = \"$(id -u)\" ] && echo owner;"
            + " mv \"$p\" \"$p.moved\" 2>/dev/null && echo renamed;"
            + " mv \"$TMPDIR\" \"$p.out\" 2>/dev/null && echo moved-out;"
            + " ln -s / \"$p.link\" 2>/dev/null && echo linked;"
            + " mkdir \"$p-x\" 2>/dev/null && echo made; echo \"$p\"";
    ExecResult r = runner.exec("sh", List.of("-c", script), timeout());
    List<String> lines = r.stdoutText().lines().toList();
    assertThat(lines).as(r.stderrText()).containsExactly("wrote-inside", "owner", lines.getLast());
    Path parent = Path.of(lines.getLast());
    assertThat(parent).isDirectory();
    assertThat(parent.resolveSibling(parent.getFileName() + ".moved")).doesNotExist();
  }

  @Test
  void aTreeMovedOutOfTheParentHoldsStillForAChildWorkingInIt() throws Exception {
    // What the trash relies on: a child keeps no write access to a tree moved out of its
    // writable paths, even from a working directory inside it (Landlock checks where a file is).
    HostRequirements.require(Landlock.availability());
    ScratchDirectories s = scratch();
    Path a = s.take("a");
    Path root = Files.createDirectory(tmp.resolve("root"));
    Path away = Files.createDirectory(tmp.resolve("away")); // as the trash: in no writable path
    ConfinedRunner runner =
        ConfinedRunner.builder(root.toString())
            .writablePaths(s.parent().toString())
            .rootless(true)
            .build();
    String script =
        "cd \"$1\" && mkdir d && touch d/f ready || exit 1;"
            + " while [ ! -e \"$2\" ]; do sleep 0.01; done;"
            + " for op in 'mkdir e' 'touch g' 'rm d/f' 'rmdir d' 'mkfifo p' 'ln -s / l' 'mv d m'; do"
            + " if $op 2>/dev/null; then echo \"$op: done\"; else echo \"$op: refused\"; fi; done";
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<ExecResult> child =
          pool.submit(
              () ->
                  runner.exec(
                      "sh",
                      List.of("-c", script, "sh", a.toString(), root.resolve("go").toString()),
                      timeout()));
      for (int i = 0; i < 3000 && !Files.exists(a.resolve("ready")); i++) {
        Thread.sleep(10);
      }
      assertThat(a.resolve("ready")).exists();
      Path moved = Files.move(a, away.resolve("a")); // a rename, as into the trash
      Files.createFile(root.resolve("go"));
      ExecResult r = child.get(60, TimeUnit.SECONDS);
      assertThat(r.stdoutText())
          .as(r.stderrText())
          .contains(
              "mkdir e: refused",
              "touch g: refused",
              "rm d/f: refused",
              "rmdir d: refused",
              "mkfifo p: refused",
              "ln -s / l: refused",
              "mv d m: refused");
      assertThat(names(moved)).containsExactly("d", "ready");
      assertThat(names(moved.resolve("d"))).containsExactly("f");
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Keeps a tree {@code d/e/f} ({@code e} read-only) in each exec-N of the parent and swaps {@code
   * d}, and exec-N itself, for a fifo and a link out, as fast as it can, from when it makes {@code
   * started} in its working directory until {@code stop} exists; prints how many swaps it made.
   */
  private static final String RACER =
      """
      import os, sys
      parent, outside, stop = sys.argv[1:4]
      open("started", "w").close()
      swaps = 0
      while not os.path.exists(stop):
          for name in os.listdir(parent):
              if not name.startswith("exec-") or name.endswith(".aside"):
                  continue
              d = os.path.join(parent, name, "d")
              try:
                  os.makedirs(os.path.join(d, "e", "f"))
                  os.chmod(os.path.join(d, "e"), 0o500)
              except OSError:
                  pass
              for p in (d, d, d, os.path.join(parent, name)):
                  aside = p + ".aside"
                  try:
                      os.rename(p, aside)
                  except OSError:
                      continue
                  for make in (os.mkfifo, lambda p: os.symlink(outside, p)):
                      try:
                          make(p)
                          swaps += 1
                          os.unlink(p)
                      except OSError:
                          pass
                  try:
                      os.rename(aside, p)
                  except OSError:
                      pass
      print(swaps)
      """;

  @Test
  void aChildSwappingFifosAndLinksInNeitherBlocksNorMisleadsTheEmptying() throws Exception {
    // A confined child (the parent is its writable path) swaps directories for fifos and links
    // while execs' directories are given back: opening a name it swapped for a fifo would block
    // for good, following one it swapped for a link would empty or chmod outside.
    HostRequirements.require(Landlock.availability());
    HostRequirements.requireProgram("python3");
    ScratchDirectories s = scratch();
    Path root = Files.createDirectory(tmp.resolve("root"));
    Files.writeString(root.resolve("racer.py"), RACER);
    Path stop = root.resolve("stop");
    Set<PosixFilePermission> outsideMode = mode(outside);
    ConfinedRunner runner =
        ConfinedRunner.builder(root.toString())
            .writablePaths(s.parent().toString())
            .rootless(true)
            .build();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<ExecResult> racer =
          pool.submit(
              () ->
                  runner.exec(
                      "python3",
                      List.of(
                          "racer.py", s.parent().toString(), outside.toString(), stop.toString()),
                      timeout()));
      for (int i = 0; i < 3000 && !Files.exists(root.resolve("started")); i++) {
        Thread.sleep(10);
      }
      assertThat(root.resolve("started")).exists();
      assertTimeoutPreemptively(
          Duration.ofSeconds(60),
          () -> {
            for (int i = 0; i < 500; i++) {
              // The racer fills it (this unconfined JVM writing there would follow its links).
              s.giveBack(s.take("a"), i % 3 != 0);
            }
          });
      Files.createFile(stop);
      ExecResult r = racer.get(60, TimeUnit.SECONDS);
      assertThat(r.exitCode()).as(r.stderrText()).isZero();
      assertThat(Long.parseLong(r.stdoutText().strip())).as("swaps").isPositive();
    } finally {
      Files.writeString(stop, "");
      pool.shutdownNow();
    }
    assertThat(names(outside)).containsExactly("precious", "sub");
    assertThat(mode(outside)).isEqualTo(outsideMode);
  }

  // ---- concurrency

  @Test
  void concurrentExecsNeverShareADirectoryAndEachFindsItEmpty() throws Exception {
    ScratchDirectories s = scratch();
    int threads = 8;
    int rounds = 200;
    Set<Path> held = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Void>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int id = t;
        done.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < rounds; i++) {
                    Path d = s.take("t" + id);
                    assertThat(held.add(d)).as("%s held by two execs", d).isTrue();
                    assertThat(names(d)).as("left in %s", d).isEmpty();
                    Files.createDirectories(d.resolve("by-" + id + "/" + i));
                    Files.writeString(d.resolve("by-" + id + "/f"), "x");
                    held.remove(d);
                    s.giveBack(d, i % 10 != 0); // now and then an exec whose tree may live on
                  }
                  return null;
                }));
      }
      for (Future<Void> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
    // New directories are made only when every existing one is in use.
    assertThat(names(s.parent()).size()).isBetween(1, threads);
    for (String n : names(s.parent())) {
      assertEmptyDirectory(s.parent().resolve(n));
    }
  }

  // ---- the parent after the JVM

  private ForkedJvm.Outcome fork(Path tmpdir, List<String> jvmOptions, String... args)
      throws Exception {
    List<String> arguments = new ArrayList<>(jvmOptions);
    arguments.add("-Djava.io.tmpdir=" + tmpdir);
    arguments.add("--enable-native-access=ALL-UNNAMED");
    arguments.add("-cp");
    arguments.add(System.getProperty("java.class.path"));
    arguments.add(ScratchDirectoriesMain.class.getName());
    arguments.addAll(List.of(args));
    ForkedJvm.Outcome o = ForkedJvm.java(arguments, FORKED);
    assertThat(o.exitCode()).as(o.output()).isZero();
    return o;
  }

  private static String reported(ForkedJvm.Outcome o, String key) {
    return o.output()
        .lines()
        .filter(l -> l.startsWith(key + "="))
        .map(l -> l.substring(key.length() + 1))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + key + " in: " + o.output()));
  }

  @Test
  void theParentGoesWhenTheJvmExits() throws Exception {
    Path tmpdir = Files.createDirectory(tmp.resolve("tmpdir")).toRealPath();
    ForkedJvm.Outcome o = fork(tmpdir, List.of(), "clean");
    Path parent = Path.of(reported(o, "parent"));
    assertThat(parent.getParent()).isEqualTo(tmpdir);
    assertThat(parent).doesNotExist();
    assertThat(names(tmpdir)).isEmpty();
  }

  @Test
  void whatExecsLeftAtExitGoesWithTheParentHoweverHostile() throws Exception {
    // An exec still holding its directory at exit, which it made unreadable, with a deep tree,
    // read-only and locked directories, a fifo and a link out; one given back not reusable.
    Path tmpdir = Files.createDirectory(tmp.resolve("tmpdir")).toRealPath();
    ForkedJvm.Outcome o = fork(tmpdir, List.of(), "hostile", outside.toString());
    assertThat(Path.of(reported(o, "parent"))).doesNotExist();
    assertThat(names(tmpdir)).isEmpty();
  }

  @Test
  void aParentLeftAtExitIsRemovedByTheNextJvmOnly() throws Exception {
    Path tmpdir = Files.createDirectory(tmp.resolve("tmpdir")).toRealPath();
    // A JVM killed (halted: no shutdown hook) while an exec held a directory with a file.
    Path parent = Path.of(reported(fork(tmpdir, List.of(), "litter"), "parent"));
    assertThat(parent).isDirectory();
    assertThat(names(tmpdir)).hasSize(2); // and its trash
    // Another JVM's (this one's pid is running) is kept; the dead one's go.
    Path alive = Files.createDirectory(tmpdir.resolve("confine-scratch-1-alive"));
    Files.writeString(alive.resolve("f"), "x");
    ScratchDirectories.removeStale(tmpdir);
    assertThat(names(tmpdir)).containsExactly(alive.getFileName().toString());
    assertThat(alive.resolve("f")).exists();
  }

  @Test
  void creatingInATemporaryDirectoryThatIsMissingFailsWithInternal() throws Exception {
    ForkedJvm.Outcome o = fork(tmp.resolve("missing"), List.of(), "create");
    assertThat(reported(o, "failed")).isEqualTo(Kind.INTERNAL.name());
  }

  @Test
  void execsThatAreNotReusedDoNotGrowTheDeleteOnExitList() throws Exception {
    Path tmpdir = Files.createDirectory(tmp.resolve("tmpdir")).toRealPath();
    ForkedJvm.Outcome o =
        fork(tmpdir, List.of("--add-opens=java.base/java.io=ALL-UNNAMED"), "churn", "1000");
    assertThat(Integer.parseInt(reported(o, "deleteOnExit"))).isLessThan(10);
  }

  // ---- stale parents

  /** Above PID_MAX_LIMIT (2^22), the most pid_max can be: no process can have it. */
  private static long deadPid() {
    return (1L << 22) + 1;
  }

  @Test
  void staleParentsAreEmptiedWithoutFollowingAndRemoved() throws Exception {
    long dead = deadPid();
    Path stale = Files.createDirectories(tmp.resolve("confine-scratch-" + dead + "-abc/exec-1/x"));
    Files.writeString(stale.resolve("f"), "x");
    Files.createSymbolicLink(stale.resolve("out"), outside);
    Files.createSymbolicLink(tmp.resolve("confine-scratch-" + dead + "-abc/exec-2"), outside);
    // A stale "parent" that is a link: the link goes, what it points at stays.
    Files.createSymbolicLink(tmp.resolve("confine-scratch-" + dead + "-link"), outside);
    Files.writeString(tmp.resolve("confine-scratch-" + dead + "-file"), "x");
    Path mine =
        Files.createDirectory(
            tmp.resolve("confine-scratch-" + ProcessHandle.current().pid() + "-mine"));
    Path notOurs = Files.createDirectory(tmp.resolve("confine-scratch-abc-x"));
    Path other = Files.createDirectory(tmp.resolve("unrelated-" + dead));
    ScratchDirectories.removeStale(tmp);
    assertThat(names(tmp))
        .containsExactlyInAnyOrder(
            "outside",
            mine.getFileName().toString(),
            notOurs.getFileName().toString(),
            other.getFileName().toString());
  }

  @Test
  void aStaleParentIsRemovedHoweverDeepAndReadOnlyItsTree() throws Exception {
    Path stale = Files.createDirectory(tmp.resolve("confine-scratch-" + deadPid() + "-deep"));
    Path exec = Files.createDirectory(stale.resolve("exec-1"));
    deepTree(exec, 300);
    run(exec, "mkdir -p locked/in && echo x > locked/in/h && chmod 000 locked/in locked");
    run(exec, "mkdir ro && echo x > ro/f && chmod 555 ro");
    ScratchDirectories.removeStale(tmp);
    assertThat(names(tmp)).containsExactly("outside");
  }

  @Test
  void aPidTooLargeForALongDoesNotStopTheCleanupOfTheOthers() throws Exception {
    Path stale = Files.createDirectory(tmp.resolve("confine-scratch-" + deadPid() + "-abc"));
    Files.createDirectory(tmp.resolve("confine-scratch-99999999999999999999-x"));
    ScratchDirectories.removeStale(tmp);
    assertThat(stale).doesNotExist();
  }
}
