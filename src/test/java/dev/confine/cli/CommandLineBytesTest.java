package dev.confine.cli;

import static dev.confine.testing.RawBytes.NOT_UTF8;
import static dev.confine.testing.RawBytes.NOT_UTF8_PRINTF;
import static dev.confine.testing.RawBytes.concat;
import static dev.confine.testing.RawBytes.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.confinement.Landlock;
import dev.confine.testing.HostRequirements;
import dev.confine.testing.RawBytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code confine} command in a JVM of its own, given bytes that are not UTF-8 on its
 * command line and in its environment: they reach the child verbatim (the JVM's own {@code main}
 * arguments and {@code System.getenv()} hold U+FFFD for them).
 */
class CommandLineBytesTest {
  @TempDir Path tmp;

  /**
   * Runs {@code sh -c} with {@code $X} holding the raw bytes and {@code confine} a function that
   * starts the command in a new JVM; returns what it wrote on stdout.
   */
  private byte[] confine(String script, Map<String, String> env) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
            "sh",
            "-c",
            "X=\"$(printf '"
                + NOT_UTF8_PRINTF
                + "')\"; confine() { \"$JAVA\" --enable-native-access=ALL-UNNAMED -cp \"$CP\""
                + " dev.confine.cli.Main \"$@\"; }; "
                + script);
    pb.environment().put("JAVA", java);
    pb.environment().put("CP", System.getProperty("java.class.path"));
    pb.environment().putAll(env);
    pb.directory(tmp.toFile());
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("exit status; stderr: %s", err).isZero();
    return out;
  }

  private byte[] confine(String script) throws Exception {
    return confine(script, Map.of());
  }

  @Test
  void argumentsEnvValuesAndTheInheritedEnvironmentReachTheChildVerbatim() throws Exception {
    assertThat(
            confine(
                "RAWV=\"$X\" confine exec --env \"V=$X\" --"
                    + " sh -c 'printf \"%s|%s|%s\" \"$1\" \"$V\" \"$RAWV\"' sh \"a$X\"b"))
        .isEqualTo(concat(utf8("a"), NOT_UTF8, utf8("b|"), NOT_UTF8, utf8("|"), NOT_UTF8));
  }

  @Test
  void theCommandItselfIsLookedUpByItsBytes() throws Exception {
    RawBytes.sh(tmp, "printf '#!/bin/sh\\necho ran\\n' > \"$X\" && chmod +x \"$X\"");
    assertThat(confine("confine exec -- \"./$X\"")).isEqualTo(utf8("ran\n"));
  }

  @Test
  void theWorkDirIsEnteredByItsBytes() throws IOException, Exception {
    RawBytes.sh(tmp, "mkdir \"$X\"");
    byte[] expected = concat(utf8(tmp.toRealPath() + "/"), NOT_UTF8, utf8("\n"));
    assertThat(confine("confine exec -C \"$X\" -- pwd -P")).isEqualTo(expected);
    assertThat(confine("confine exec --workdir \"$PWD/$X\" -- pwd -P")).isEqualTo(expected);
  }

  @Test
  void underTheCLocaleUtf8ArgumentsStillArriveExactly() throws Exception {
    assertThat(
            confine("confine exec -- printf %s \"$(printf '\\303\\251')\"", Map.of("LC_ALL", "C")))
        .isEqualTo(utf8("é"));
  }

  @Test
  @Tag("confinement")
  void confinedTheBytesReachTheChildVerbatimToo() throws Exception {
    HostRequirements.require(Landlock.availability());
    RawBytes.sh(tmp, "mkdir \"$X\"");
    assertThat(
            confine(
                "confine exec --confined --rootless -C \"$X\" --env \"V=$X\" --"
                    + " sh -c 'printf \"%s|%s|\" \"$1\" \"$V\"; pwd -P' sh \"$X\""))
        .isEqualTo(
            concat(
                NOT_UTF8,
                utf8("|"),
                NOT_UTF8,
                utf8("|" + tmp.toRealPath() + "/"),
                NOT_UTF8,
                utf8("\n")));
  }
}
