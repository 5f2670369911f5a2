package dev.confine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.Landlock;
import dev.confine.linux.SeccompFilter;
import dev.confine.testing.HostRequirements;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class DoctorCommandTest {
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
    HostRequirements.require(
        Landlock.abi() > 0, Landlock.unavailabilityCause().orElse("no Landlock"));
    Run r = run("doctor", "--confined", "--rootless");
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out().lines())
        .anyMatch(l -> l.matches("filesystem bounds +yes +Landlock ABI \\d+: .+"))
        .anyMatch(l -> l.matches("net deny_all +(yes|no) +.+"))
        .anyMatch(l -> l.matches("read-only host +no +.*rootless forced.*"))
        .anyMatch(l -> l.matches("no_new_privs +yes +.*setuid.*"))
        .anyMatch(l -> l.matches("signal scoping +(yes|no) +.+"));
    if (SeccompFilter.isAvailable()) {
      assertThat(r.out()).containsPattern("net deny_all +yes +seccomp:");
    }
    Run json = run("doctor", "--confined", "--json");
    assertThat(json.out()).contains("{\"dimension\":\"read-only host\",\"enforced\":false");
  }

  @Test
  void confinementFlagsNeedConfinedAndRootlessExcludesAReadOnlyHost() {
    Run r = run("doctor", "--rootless");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).contains("confine: --rootless needs --confined");
    Run both = run("doctor", "--confined", "--rootless", "--read-only-host");
    assertThat(both.status()).isEqualTo(2);
    assertThat(both.err()).contains("confine: a read-only host needs a private mount namespace");
  }
}
