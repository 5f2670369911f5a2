package dev.confine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Capability;
import dev.confine.Capability.Dimension;
import dev.confine.Enforcement;
import dev.confine.EnforcementReporter;
import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetMode;
import dev.confine.Runner;
import dev.confine.Runners;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.testing.FakeRunner;
import dev.confine.testing.HostRequirements;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DoctorCommandTest {
  private record Run(int status, String out, String err) {}

  private static Run run(String... args) {
    return run(Main.BACKEND, args);
  }

  private static Run run(RunnerFactory factory, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            args,
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            factory);
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void tableHasOneRowPerDimensionWithTheMechanismOrReason() {
    Run r = run("doctor");
    assertThat(r.status()).isZero();
    assertThat(r.out().lines())
        .anyMatch(l -> l.matches("memory +(yes|no) +.+"))
        .anyMatch(l -> l.matches("pids +(yes|no) +.+"))
        .anyMatch(l -> l.matches("cpu +(yes|no) +.+"))
        .anyMatch(l -> l.matches("disk +no +no quota mechanism"))
        .anyMatch(l -> l.matches("net deny_all +no +.+"));
  }

  @Test
  void samplerAndNoneAreReportedAsChosen() {
    String sampler = run("doctor", "--caps", "sampler").out();
    assertThat(sampler)
        .containsPattern("memory +yes +aggregate RSS from /proc sampler")
        .containsPattern("memory +yes +.*not counted: shared memory and tmpfs files")
        .containsPattern("cpu throttle +no +needs a cgroup cpu controller")
        .containsPattern(
            "tree kill +yes +every exec and session, capped or not: /proc sampler: .*cannot see a"
                + " process that left every known session");
    // No caps, but the tree is tracked all the same (by a cgroup where one can be made).
    String none = run("doctor", "--caps", "none").out();
    assertThat(none)
        .containsPattern("memory +no +caps disabled for this runner")
        .containsPattern("cpu throttle +no +caps disabled for this runner")
        .containsPattern("tree kill +yes +every exec and session, capped or not: ");
  }

  @Test
  void theDefaultSaysHowEveryTreeIsHeldAndThatTheBudgetIsNotAThrottle() {
    HostRequirements.requireRoot(); // the cgroup rows; as nobody the sampler's (above)
    String out = run("doctor").out();
    assertThat(out)
        .containsPattern("tree kill +yes +every exec and session, capped or not: cgroup v1 freezer")
        .containsPattern(
            "cpu +yes +budget \\(the tree is killed once it is spent, never throttled\\)")
        .containsPattern("cpu throttle +yes +cgroup v1 cpu.cfs_quota_us");
  }

  @Test
  void jsonIsOneObjectWithEveryDimension() {
    Run r = run("doctor", "--json");
    assertThat(r.status()).isZero();
    assertThat(r.out()).startsWith("{\"dimensions\":[{\"dimension\":\"spawn\",\"enforced\":true");
    assertThat(r.out()).contains("{\"dimension\":\"memory\",\"enforced\":").endsWith("]}\n");
  }

  @Test
  void anUnknownMechanismIsAUsageError() {
    Run r = run("doctor", "--caps", "magic");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).contains("unknown caps mechanism \"magic\"");
  }

  @Test
  void confinedReportsTheConfinedRunnersRows() {
    HostRequirements.require(Landlock.availability());
    Run r = run("doctor", "--confined", "--rootless");
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out().lines())
        .anyMatch(l -> l.matches("filesystem bounds +yes +Landlock ABI \\d+: .+"))
        .anyMatch(l -> l.matches("net deny_all +(yes|no) +.+"))
        .anyMatch(l -> l.matches("read-only host +no +.*rootless forced.*"))
        .anyMatch(l -> l.matches("no_new_privs +yes +.*setuid.*"))
        .anyMatch(l -> l.matches("signal scoping +(yes|no) +.+"));
    if (SeccompFilter.availability().isAvailable()) {
      assertThat(r.out()).containsPattern("net deny_all +yes +seccomp:");
    }
    Run json = run("doctor", "--confined", "--json");
    assertThat(json.out()).contains("{\"dimension\":\"read-only host\",\"enforced\":false");
  }

  @Test
  void bwrapReportsTheBubblewrapRunnersRows() {
    HostRequirements.requireProgram("bwrap");
    Run r = run("doctor", "--bwrap");
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out().lines())
        .anyMatch(l -> l.matches("spawn +yes +/\\S*bwrap spawned through posix_spawn.+"))
        .anyMatch(l -> l.matches("net deny_all +yes +private network namespace \\(--unshare-net.+"))
        .anyMatch(l -> l.matches("net allow_list +no +not built yet for bwrap.+"))
        .anyMatch(l -> l.matches("capabilities +yes +none: --cap-drop ALL.+"))
        .anyMatch(l -> l.matches("read-only host +yes +.+"));
  }

  @Test
  void confinementFlagsNeedConfinedAndRootlessExcludesAReadOnlyHost() {
    Run r = run("doctor", "--rootless");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).contains("confine: --rootless needs --confined");
    Run both = run("doctor", "--confined", "--rootless", "--read-only-host");
    assertThat(both.status()).isEqualTo(2);
    assertThat(both.err())
        .contains("confine: --read-only-host needs a private mount namespace, which --rootless");
  }

  @Test
  void reportsOnWhateverRunnerTheFactoryMakes() {
    FakeRunner fake =
        new FakeRunner()
            .reporting(
                Enforcement.builder()
                    .envAllowList(true)
                    .memoryCap(true)
                    .netModes(NetMode.DENY_ALL)
                    .build());
    List<String> roots = new ArrayList<>();
    Run r =
        run(
            (root, maxOutputBytes) -> {
              roots.add(root);
              return fake;
            },
            "doctor");
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(roots).containsExactly(Path.of("").toAbsolutePath().toString());
    String yes = "yes  enforced (the runner names no mechanism)\n";
    String no = "no   not enforced by this runner\n";
    assertThat(r.out())
        .isEqualTo(
            "env                "
                + yes
                + "filesystem bounds  "
                + no
                + "net deny_all       "
                + yes
                + "net allow_list     "
                + no
                + "net proxy          "
                + no
                + "memory             "
                + yes
                + "cpu                "
                + no
                + "cpu throttle       "
                + no
                + "pids               "
                + no
                + "disk               "
                + no);
  }

  @Test
  void printsTheRowsARunnerReportsItselfAsTheyAre() {
    class Reporting implements Runner, EnforcementReporter {
      @Override
      public ExecResult exec(String command, List<String> args, ExecOptions options) {
        return ExecResult.ofExit(0);
      }

      @Override
      public Enforcement enforcement() {
        return Enforcement.NONE;
      }

      @Override
      public List<Capability> capabilities() {
        return List.of(
            new Capability(Dimension.TREE_KILL, true, "a \"quoted\" mechanism"),
            new Capability(Dimension.DISK, false, "no quota"));
      }
    }
    Runner decorated = Runners.withDefaults(new Reporting(), null);
    Run table = run((root, maxOutputBytes) -> decorated, "doctor");
    assertThat(table.out())
        .isEqualTo("tree kill  yes  a \"quoted\" mechanism\ndisk       no   no quota\n");
    Run json = run((root, maxOutputBytes) -> decorated, "doctor", "--json");
    assertThat(json.out())
        .isEqualTo(
            "{\"dimensions\":[{\"dimension\":\"tree kill\",\"enforced\":true,\"detail\":\"a"
                + " \\\"quoted\\\" mechanism\"},{\"dimension\":\"disk\",\"enforced\":false,"
                + "\"detail\":\"no quota\"}]}\n");
  }

  @Test
  void aRunnerTheFactoryCannotMakeIsRefusedWith125() {
    Run r =
        run(
            (root, maxOutputBytes) -> {
              throw new SandboxException(Kind.NOT_AVAILABLE, "sandbox: no backend on this host");
            },
            "doctor");
    assertThat(r.status()).isEqualTo(125);
    assertThat(r.err()).isEqualTo("confine: sandbox: no backend on this host\n");
    assertThat(r.out()).isEmpty();
  }
}
