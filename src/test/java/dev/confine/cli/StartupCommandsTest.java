package dev.confine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.sys.NativeAccess;
import dev.confine.testing.HostRequirements;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What start-up relies on: the training commands of the start-up cache still run as meant (a
 * renamed option would make one a usage error, and the cache would then miss its code), only the
 * subcommand named is built yet help and errors still know them all, and {@code completion} prints
 * the whole command's bash completion.
 */
class StartupCommandsTest {
  private record Run(int status, String out, String err) {}

  private static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            args,
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            Main.BACKEND);
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void everyTrainingCommandRunsAsMeantAndOnlyTheLastIsAUsageError() {
    HostRequirements.require(NativeAccess.availability().prefixed("the engine cannot run here: "));
    List<List<String>> commands = AotTraining.COMMANDS;
    for (int i = 0; i < commands.size(); i++) {
      Run r = run(commands.get(i).toArray(String[]::new));
      if (i == commands.size() - 1) {
        assertThat(r.status()).as("%s", commands.get(i)).isEqualTo(ExitStatus.USAGE);
      } else {
        assertThat(r.status()).as("%s: %s", commands.get(i), r.err()).isZero();
      }
    }
  }

  @Test
  void helpAndErrorsStillKnowEverySubcommand() {
    Run help = run("--help");
    assertThat(help.status()).isZero();
    assertThat(help.out()).contains("exec", "shell", "doctor", "completion");

    Run typo = run("exe", "--", "true");
    assertThat(typo.status()).isEqualTo(ExitStatus.USAGE);
    assertThat(typo.err()).isEqualTo("confine: unknown command 'exe' (try 'confine --help')\n");
  }

  @Test
  void aSubcommandNamedFirstStillParsesItsOwnOptionsAndStopsAtCmd() {
    Run r = run("exec", "--help");
    assertThat(r.status()).isZero();
    assertThat(r.out()).contains("--stdin-file", "Exit status");
  }

  @Test
  void completionPrintsTheBashScriptOfTheWholeCommand() {
    Run r = run("completion");
    assertThat(r.status()).isZero();
    assertThat(r.err()).isEmpty();
    assertThat(r.out())
        .startsWith("#!/usr/bin/env bash")
        .contains("complete -F _complete_confine -o default confine")
        .contains("exec", "shell", "doctor", "--confined", "--net", "--json", "--user");
  }
}
