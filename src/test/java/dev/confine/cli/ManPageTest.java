package dev.confine.cli;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.testing.HostRequirements;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * confine(1), written from the command's model: every visible subcommand and option is on the page,
 * roff's special characters are escaped, and groff formats it without a warning.
 */
class ManPageTest {
  private static String page() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status =
        Main.run(
            new String[] {"manpage"},
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, UTF_8),
            new PrintStream(new ByteArrayOutputStream(), true, UTF_8),
            Main.BACKEND);
    assertThat(status).isZero();
    return out.toString(UTF_8);
  }

  @Test
  void everyVisibleSubcommandAndOptionIsOnThePage() {
    String page = page();
    assertThat(page).startsWith(".TH CONFINE 1 ");
    assertThat(page)
        .contains(".SH \"CONFINE EXEC\"", ".SH \"CONFINE SHELL\"", ".SH \"CONFINE DOCTOR\"")
        .contains(".SH \"EXIT STATUS\"", "124", "125", "127")
        .contains("\\fB\\-\\-confined\\fR", "\\fB\\-\\-stdin\\-file\\fR \\fIFILE\\fR")
        .contains("\\fB\\-C\\fR, \\fB\\-\\-workdir\\fR \\fIDIR\\fR")
        .doesNotContain("MANPAGE"); // hidden
  }

  @Test
  void roffsSpecialCharactersAreEscaped() {
    assertThat(ManPage.escape("a\\b")).isEqualTo("a\\eb");
    assertThat(ManPage.escape("--x")).isEqualTo("\\-\\-x");
    assertThat(ManPage.escape(".start")).isEqualTo("\\&.start");
    assertThat(ManPage.escape("'quote")).isEqualTo("\\&'quote");
    assertThat(page().lines())
        .allSatisfy(
            l -> {
              if (l.startsWith(".")) {
                assertThat(l).matches("\\.(TH|SH|TP|IP|PP|B|BR|I|br|nf|fi)( .*)?");
              }
            });
  }

  @Test
  void groffFormatsItWithoutAWarning(@TempDir Path dir) throws IOException, InterruptedException {
    HostRequirements.requireProgram("groff");
    Path file = Files.writeString(dir.resolve("confine.1"), page());
    Process p =
        new ProcessBuilder("groff", "-man", "-Tutf8", "-ww", "-z", file.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isZero();
    assertThat(out).isEmpty();
  }
}
