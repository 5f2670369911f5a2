package dev.confine.build;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.sys.NativeAccess;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The installed command, laid out by {@code scripts/lib/make-dist} (what {@code scripts/install}
 * runs after building) from a jar of target/classes and the libraries on this JVM's class path: it
 * runs from a fresh directory with nothing but a JDK (the one it was installed with, or another one
 * found when that is gone), with the start-up cache where the JDK makes one, and ships completion
 * for bash and zsh.
 */
class DistributionTest {
  @TempDir static Path work;
  private static Path prefix;
  private static Path javaHome;

  @BeforeAll
  static void install() throws Exception {
    HostRequirements.require(NativeAccess.availability().prefixed("the engine cannot run here: "));
    Path libs = Files.createDirectories(work.resolve("libs"));
    // What scripts/install copies: every runtime dependency (the egress proxy's Netty and
    // BouncyCastle among them; the start-up cache's training loads them).
    for (Path jar : runtimeJars()) {
      Files.copy(jar, libs.resolve(jar.getFileName()));
    }
    Path jar = work.resolve("confine.jar");
    ToolProvider tool = ToolProvider.findFirst("jar").orElseThrow();
    int rc =
        tool.run(
            System.out,
            System.err,
            "--create",
            "--file",
            jar.toString(),
            "-C",
            ApiSurfaceTest.mainClasses().toString(),
            ".");
    assertThat(rc).isZero();
    prefix = work.resolve("prefix with space");
    javaHome = Path.of(System.getProperty("java.home"));
    Result r =
        run(
            List.of(
                Path.of("scripts/lib/make-dist").toAbsolutePath().toString(),
                jar.toString(),
                libs.toString(),
                prefix.toString()),
            Map.of("JAVA_HOME", javaHome.toString(), "PATH", "/usr/bin:/bin"),
            Path.of("").toAbsolutePath());
    assertThat(r.exit()).as(r.err()).isZero();
  }

  /** The runtime dependencies' jars on this test's class and module paths. */
  private static List<Path> runtimeJars() {
    List<Path> jars = new java.util.ArrayList<>();
    for (String property : List.of("java.class.path", "jdk.module.path")) {
      for (String entry : System.getProperty(property, "").split(java.io.File.pathSeparator)) {
        String name =
            Path.of(entry).getFileName() == null ? "" : Path.of(entry).getFileName().toString();
        if (name.endsWith(".jar")
            && name.matches("(picocli|slf4j-api|slf4j-nop|netty-|bcp|bcutil).*")
            && jars.stream().noneMatch(j -> j.getFileName().toString().equals(name))) {
          jars.add(Path.of(entry));
        }
      }
    }
    assertThat(jars).as("the runtime jars on the test's paths").isNotEmpty();
    return jars;
  }

  @Test
  void theLayoutHoldsTheCommandItsLibrariesCompletionAndManualPage() throws IOException {
    Path home = prefix.resolve("lib/confine");
    assertThat(prefix.resolve("bin/confine")).isExecutable();
    assertThat(home.resolve("confine.jar")).isRegularFile();
    assertThat(home.resolve("lib").resolve(jarOf(picocli.CommandLine.class).getFileName()))
        .isRegularFile();
    assertThat(Files.readString(home.resolve("java-home")).strip()).isEqualTo(javaHome.toString());
    assertThat(Files.list(prefix.resolve("lib")).map(p -> p.getFileName().toString()))
        .as("no staging directory is left behind")
        .containsExactly("confine");
    String bash = Files.readString(prefix.resolve("share/bash-completion/completions/confine"));
    assertThat(bash)
        .contains("complete -F _complete_confine -o default confine")
        .contains("exec", "shell", "doctor", "completion", "--confined", "--stdin-file");
    assertThat(Files.readString(prefix.resolve("share/man/man1/confine.1")))
        .startsWith(".TH CONFINE 1 ");
    String zsh = Files.readString(prefix.resolve("share/zsh/site-functions/_confine"));
    assertThat(zsh).startsWith("#compdef confine\n").contains("bashcompinit").contains(bash);
  }

  @Test
  void theCommandRunsFromAFreshDirectoryWithOnlyAJdk() throws Exception {
    Path fresh = Files.createDirectories(work.resolve("fresh"));
    Result r = confine(Map.of(), fresh, "exec", "--", "sh", "-c", "pwd; echo err >&2; exit 7");
    assertThat(r.out()).isEqualTo(fresh.toRealPath() + "\n");
    assertThat(r.err()).isEqualTo("err\n");
    assertThat(r.exit()).isEqualTo(7);
    Result v = confine(Map.of(), fresh, "--version");
    assertThat(v.out()).startsWith("confine ");
    assertThat(v.exit()).isZero();
  }

  @Test
  void theStartUpCacheIsBuiltAndUsedWhereTheJdkMakesOne() throws Exception {
    Path cache = prefix.resolve("lib/confine/confine.aot");
    if (Runtime.version().feature() < 25) {
      assertThat(cache).doesNotExist();
      return;
    }
    assertThat(cache).isNotEmptyFile();
    Result r =
        confine(
            Map.of("CONFINE_JAVA_OPTS", "-Xlog:class+load=info:stderr"),
            work,
            "exec",
            "--",
            "true");
    assertThat(r.exit()).isZero();
    assertThat(r.err()).contains("dev.confine.cli.Main source: shared objects file");
  }

  @Test
  void movedAndWithItsJdkGoneItFindsAnotherAndSaysNothingOfTheCache() throws Exception {
    Path copy = work.resolve("moved");
    copyTree(prefix, copy);
    Files.writeString(copy.resolve("lib/confine/java-home"), "/nonexistent/jdk\n");
    Result r =
        run(
            List.of(copy.resolve("bin/confine").toString(), "exec", "--", "echo", "ok"),
            Map.of("PATH", "/usr/bin:/bin", "JAVA_HOME", javaHome.toString()),
            work);
    assertThat(r.out()).isEqualTo("ok\n");
    assertThat(r.err()).isEmpty();
    assertThat(r.exit()).isZero();
  }

  @Test
  void withNoJdkAtAllItSaysSoAndExits125() throws Exception {
    Path copy = work.resolve("nojdk");
    copyTree(prefix, copy);
    Files.writeString(copy.resolve("lib/confine/java-home"), "/nonexistent/jdk\n");
    // A launcher whose JDK search finds nothing: /usr/lib/jvm replaced by an empty directory.
    Path launcher = copy.resolve("bin/confine");
    Files.writeString(
        launcher,
        Files.readString(launcher).replace("/usr/lib/jvm/*", work.resolve("empty") + "/*"));
    Result r =
        run(
            List.of(launcher.toString(), "exec", "--", "true"),
            Map.of("PATH", "/usr/bin:/bin"),
            work);
    assertThat(r.exit()).isEqualTo(125);
    assertThat(r.err()).contains("no JDK 22 or newer found");
  }

  private record Result(int exit, String out, String err) {}

  private static Result confine(Map<String, String> env, Path dir, String... args)
      throws IOException, InterruptedException {
    List<String> argv = new ArrayList<>();
    argv.add(prefix.resolve("bin/confine").toString());
    argv.addAll(List.of(args));
    Map<String, String> e = new java.util.HashMap<>(env);
    e.put("PATH", "/usr/bin:/bin");
    return run(argv, e, dir);
  }

  private static Result run(List<String> argv, Map<String, String> env, Path dir)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(argv).directory(dir.toFile());
    pb.environment().clear();
    pb.environment().putAll(env);
    Path out = Files.createTempFile(work, "out", ".txt");
    Path err = Files.createTempFile(work, "err", ".txt");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Process p = pb.start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(argv + " did not end in 120 s");
    }
    return new Result(p.exitValue(), Files.readString(out, UTF_8), Files.readString(err, UTF_8));
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (var paths = Files.walk(from)) {
      for (Path p : (Iterable<Path>) paths::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
        }
      }
    }
  }

  private static Path jarOf(Class<?> type) {
    try {
      return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
