package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.testing.FakeRunner;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ComposeLocalTest {
  private final FakeRunner backend = new FakeRunner();
  private final List<ApprovalRequest> asked = new ArrayList<>();

  private Approver allowing() {
    return req -> {
      asked.add(req);
      return Decision.ALLOW;
    };
  }

  @Test
  void defaultsAreOutermostSoTheApproverSeesTheEffectiveOptions() {
    ExecOptions defaults = ExecOptions.builder().timeout(Duration.ofSeconds(5)).build();
    LocalPolicy policy =
        new LocalPolicy(defaults, null, allowing(), List.of(r -> Optional.of("always")));
    Runner r = Runners.composeLocal(backend, policy);

    r.exec("ls", List.of(), ExecOptions.builder().timeout(Duration.ofMinutes(1)).build());

    assertThat(asked)
        .singleElement()
        .satisfies(a -> assertThat(a.exec().options().timeout()).isEqualTo(Duration.ofSeconds(5)));
    assertThat(backend.lastRequest().options().timeout()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void approvalCannotGetPastTheAllowListButIsAskedFirst() {
    LocalPolicy policy =
        new LocalPolicy(
            null, List.of("ls"), allowing(), List.of(ExecPredicate.commandPatterns("rm")));
    Runner r = Runners.composeLocal(backend, policy);

    assertThatThrownBy(() -> r.exec("rm", List.of(), null))
        .extracting(e -> ((SandboxException) e).kind())
        .isEqualTo(SandboxException.Kind.POLICY_DENIED);
    assertThat(asked).hasSize(1);
    assertThat(backend.callCount()).isZero();
  }

  @Test
  void anEmptyAllowedCommandListBlocksEverything() {
    Runner r = Runners.composeLocal(backend, new LocalPolicy(null, List.of(), null, List.of()));
    assertThatThrownBy(() -> r.exec("ls", List.of(), null)).isInstanceOf(SandboxException.class);
    assertThat(backend.callCount()).isZero();
  }

  @Test
  void noPredicatesMeansNoApprovalLayerEvenWithAnApprover() {
    Runner r =
        Runners.composeLocal(
            backend,
            new LocalPolicy(
                null,
                null,
                req -> {
                  throw new AssertionError("must not be asked");
                },
                List.of()));
    r.exec("anything", List.of(), null);
    assertThat(backend.callCount()).isEqualTo(1);
  }

  @Test
  void predicatesWithoutAnApproverFailClosedOnAMatch() {
    Runner r =
        Runners.composeLocal(
            backend, new LocalPolicy(null, null, null, List.of(ExecPredicate.netNonDefault())));
    r.exec("curl", List.of(), null);
    assertThatThrownBy(
            () -> r.exec("curl", List.of(), ExecOptions.builder().net(NetPolicy.denyAll()).build()))
        .hasMessageContaining("no approver configured");
    assertThat(backend.callCount()).isEqualTo(1);
  }

  @Test
  void defaultLocalPolicyHasTwoOrThreePredicatesInOrder(@TempDir Path root) {
    LocalPolicy two = LocalPolicy.defaults(root.toString(), null);
    assertThat(two.predicates()).hasSize(2);
    assertThat(two.allowedCommands()).isNull();
    assertThat(two.defaults()).isEqualTo(ExecOptions.defaults());

    LocalPolicy three = LocalPolicy.defaults(root.toString(), allowing(), "rm", "mkfs*");
    assertThat(three.predicates()).hasSize(3);
    ExecRequest outside =
        new ExecRequest("rm", List.of(), ExecOptions.builder().workDir("/").build(), false);
    assertThat(three.predicates().get(0).match(outside)).get().asString().contains("outside root");
    ExecRequest net =
        new ExecRequest(
            "rm", List.of(), ExecOptions.builder().net(NetPolicy.denyAll()).build(), false);
    assertThat(three.predicates().get(1).match(net)).isPresent();
    assertThat(three.predicates().get(2).match(ExecRequest.of("/sbin/mkfs.ext4", null, null)))
        .isPresent();
  }

  @Test
  void defaultLocalPolicyAsksForAWorkDirOutsideTheRoot(@TempDir Path root) {
    Runner r = Runners.composeLocal(backend, LocalPolicy.defaults(root.toString(), allowing()));
    r.exec("ls", List.of(), ExecOptions.builder().workDir("sub").build());
    assertThat(asked).isEmpty();
    r.exec("ls", List.of(), ExecOptions.builder().workDir("/etc").build());
    assertThat(asked).singleElement().satisfies(a -> assertThat(a.reason()).contains("/etc"));
    assertThat(backend.callCount()).isEqualTo(2);
  }

  @Test
  void composedRunnerReportsTheBackendsEnforcement() {
    Enforcement e = Enforcement.builder().envAllowList(true).cpuCap(true).build();
    backend.reporting(e);
    Runner r =
        Runners.composeLocal(
            backend,
            new LocalPolicy(null, List.of("x"), null, List.of(ExecPredicate.interactive())));
    assertThat(Enforcement.of(r)).isEqualTo(e);
  }

  @Test
  void localPolicyCopiesItsLists() {
    List<String> allowed = new ArrayList<>(List.of("ls"));
    List<ExecPredicate> preds = new ArrayList<>();
    LocalPolicy p = new LocalPolicy(null, allowed, null, preds);
    allowed.add("rm");
    preds.add(ExecPredicate.interactive());
    assertThat(p.allowedCommands()).containsExactly("ls");
    assertThat(p.predicates()).isEmpty();
    assertThat(new LocalPolicy(null, null, null, null).predicates()).isEmpty();
  }
}
