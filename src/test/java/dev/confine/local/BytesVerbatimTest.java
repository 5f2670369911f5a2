package dev.confine.local;

import static dev.confine.testing.RawBytes.NOT_UTF8;
import static dev.confine.testing.RawBytes.NOT_UTF8_STRING;
import static dev.confine.testing.RawBytes.concat;
import static dev.confine.testing.RawBytes.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.PathTraversalException;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.testing.RawBytes;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bytes that are not UTF-8 reach the child exactly, carried as {@link dev.confine.ByteStrings}: in
 * the command, the arguments, environment values and the working directory.
 */
class BytesVerbatimTest {
  @TempDir Path tmp;
  private Path root;
  private LocalRunner runner;

  @BeforeEach
  void setUp() throws Exception {
    root = tmp.toRealPath();
    runner = LocalRunner.create(root.toString());
  }

  private static ExecOptions.Builder opts() {
    return ExecOptions.builder();
  }

  @Test
  void argumentsReachTheChildVerbatim() {
    ExecResult r =
        runner.exec("printf", List.of("%s|%s", NOT_UTF8_STRING, "é" + NOT_UTF8_STRING), null);
    assertThat(r.stdout()).isEqualTo(concat(NOT_UTF8, utf8("|é"), NOT_UTF8));
  }

  @Test
  void environmentValuesReachTheChildVerbatim() {
    ExecResult r =
        runner.exec(
            "printenv",
            List.of("CONFINE_RAW"),
            opts()
                .env(EnvPolicy.none().withInject(Map.of("CONFINE_RAW", NOT_UTF8_STRING)))
                .build());
    assertThat(r.stdout()).isEqualTo(concat(NOT_UTF8, utf8("\n")));
  }

  @Test
  void aWorkDirThatIsNotUtf8IsEnteredByItsBytesRelativeOrAbsolute() throws Exception {
    RawBytes.sh(root, "mkdir \"$X\" && mkdir \"$X/sub\"");
    byte[] expected = concat(utf8(root + "/"), NOT_UTF8, utf8("\n"));
    for (String wd :
        List.of(
            NOT_UTF8_STRING, root + "/" + NOT_UTF8_STRING, "./" + NOT_UTF8_STRING + "/sub/..")) {
      ExecResult r = runner.exec("pwd", List.of("-P"), opts().workDir(wd).build());
      assertThat(r.stdout()).as(wd).isEqualTo(expected);
    }
  }

  @Test
  void aWorkDirThatIsNotUtf8IsStillContained() throws Exception {
    Path outside = tmp.resolveSibling(tmp.getFileName() + "-outside");
    RawBytes.sh(
        root,
        "mkdir -p \""
            + outside
            + "/$X\" && ln -s \""
            + outside
            + "/$X\" \"link$X\" && ln -s \"../$(basename "
            + outside
            + ")/$X\" \"up$X\"");
    try {
      for (String wd :
          List.of(
              "link" + NOT_UTF8_STRING,
              "up" + NOT_UTF8_STRING,
              "../" + outside.getFileName() + "/" + NOT_UTF8_STRING,
              outside + "/" + NOT_UTF8_STRING,
              root + "/../" + outside.getFileName() + "/" + NOT_UTF8_STRING)) {
        assertThatThrownBy(() -> runner.exec("pwd", List.of("-P"), opts().workDir(wd).build()))
            .as(wd)
            .isInstanceOf(PathTraversalException.class);
      }
    } finally {
      RawBytes.sh(root, "rm -rf \"" + outside + "\"");
    }
  }

  @Test
  void aMissingWorkDirThatIsNotUtf8IsInternalAsAnyMissingWorkDir() {
    assertThatThrownBy(
            () -> runner.exec("true", List.of(), opts().workDir(NOT_UTF8_STRING).build()))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.INTERNAL))
        .hasMessageContaining("no such file or directory");
  }

  @Test
  void aCommandThatIsNotUtf8IsLookedUpAndRunByItsBytes() throws Exception {
    RawBytes.sh(root, "printf '#!/bin/sh\\necho ran\\n' > \"$X\" && chmod +x \"$X\"");
    assertThat(runner.exec("./" + NOT_UTF8_STRING, List.of(), null).stdoutText())
        .isEqualTo("ran\n");
    assertThatThrownBy(() -> runner.exec("./" + NOT_UTF8_STRING + "-missing", List.of(), null))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.NOT_FOUND));
  }
}
