package dev.confine.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ApprovalRequest;
import dev.confine.Approver;
import dev.confine.Decision;
import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecPredicate;
import dev.confine.LocalPolicy;
import dev.confine.NetPolicy;
import dev.confine.NoopRunner;
import dev.confine.Runner;
import dev.confine.Runners;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.testing.FakeProcessManager;
import dev.confine.testing.FakeRunner;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class ProcessManagerOfTest {
  /** What the backend's execs answer. */
  private final FakeRunner execs = new FakeRunner();

  /** The backend's sessions: it records every spec it is asked to start. */
  private final FakeProcessManager sessions = new FakeProcessManager();

  /** A backend with sessions that runs nothing. */
  private final Runner backend = sessions.runner(execs);

  private final List<ApprovalRequest> asked = new CopyOnWriteArrayList<>();

  private Approver answering(Decision d) {
    return req -> {
      asked.add(req);
      return d;
    };
  }

  private static SandboxException.Kind kindOf(Throwable t) {
    return ((SandboxException) t).kind();
  }

  private static ProcessManager managerOf(Runner r) {
    return ProcessManager.of(r).orElseThrow();
  }

  // ---- discovery ----

  @Test
  void aNullRunnerHasNoManager() {
    assertThat(ProcessManager.of(null)).isEmpty();
  }

  @Test
  void aRunnerWithoutSessionsHasNoManager() {
    assertThat(ProcessManager.of(new NoopRunner())).isEmpty();
    assertThat(ProcessManager.of(new FakeRunner())).isEmpty();
  }

  @Test
  void aRunnerThatManagesSessionsIsItsOwnManager() {
    assertThat(ProcessManager.of(backend).orElseThrow()).isSameAs(backend);
  }

  @Test
  void everyDecoratorHasAManagerEvenOverABackendWithoutSessions() {
    FakeRunner plain = new FakeRunner();
    assertThat(ProcessManager.of(Runners.allowCommands(plain, List.of("ls")))).isPresent();
    assertThat(ProcessManager.of(Runners.withDefaults(plain, null))).isPresent();
    assertThat(ProcessManager.of(Runners.withApproval(plain, null))).isPresent();
    assertThat(ProcessManager.of(Runners.withDefaults(new NoopRunner(), null))).isPresent();
  }

  // ---- allow-list ----

  @Test
  void theAllowListForwardsAllowedCommandsAsTheyAre() {
    ProcessManager m = managerOf(Runners.allowCommands(backend, List.of("ls", "/bin/echo")));
    ProcessSpec spec = new ProcessSpec("s1", List.of("ls", "-la", "/tmp"), true, 30, 90, null);

    ProcessSession h = m.start(spec);

    assertThat(h.id()).isEqualTo("s1");
    assertThat(sessions.lastSpec()).isEqualTo(spec);
    assertThat(m.list()).extracting(ProcessInfo::id).containsExactly("s1");
  }

  @Test
  void theAllowListRefusesOtherCommandsBeforeTheBackend() {
    ProcessManager m = managerOf(Runners.allowCommands(backend, List.of("/bin/echo")));

    for (List<String> argv : List.of(List.of("echo", "hi"), List.of("rm", "-rf", "/"))) {
      assertThatThrownBy(() -> m.start(ProcessSpec.pipes(argv)))
          .hasMessageContaining("allow-list")
          .extracting(ProcessManagerOfTest::kindOf)
          .isEqualTo(Kind.POLICY_DENIED);
    }
    assertThat(sessions.specs()).isEmpty();
    assertThat(sessions.list()).isEmpty();
  }

  // ---- defaults ----

  @Test
  void defaultsReachTheBackendMergedIntoTheSpec() {
    ExecOptions defaults =
        ExecOptions.builder()
            .workDir("base")
            .timeout(Duration.ofSeconds(10))
            .env(EnvPolicy.allow("PATH", "HOME", "LANG").withInject(Map.of("CI", "1")))
            .net(NetPolicy.denyAll())
            .build();
    ProcessManager m = managerOf(Runners.withDefaults(backend, defaults));
    ExecOptions call =
        ExecOptions.builder()
            .timeout(Duration.ofSeconds(60))
            .env(EnvPolicy.allow("HOME", "SECRET", "PATH").withInject(Map.of("X", "y")))
            .build();

    m.start(new ProcessSpec("d", List.of("make", "all"), false, 0, 0, call));

    ProcessSpec got = sessions.lastSpec();
    assertThat(got.id()).isEqualTo("d");
    assertThat(got.argv()).containsExactly("make", "all");
    ExecOptions opts = got.options();
    assertThat(opts.workDir()).isEqualTo("base");
    assertThat(opts.timeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(opts.env().allow()).containsExactlyInAnyOrder("PATH", "HOME");
    assertThat(opts.env().inject()).containsOnly(Map.entry("CI", "1"), Map.entry("X", "y"));
    assertThat(opts.net()).isEqualTo(NetPolicy.denyAll());
  }

  @Test
  void aSmallerCallerTimeoutWins() {
    ExecOptions defaults = ExecOptions.builder().timeout(Duration.ofSeconds(10)).build();
    ProcessManager m = managerOf(Runners.withDefaults(backend, defaults));
    ExecOptions call = ExecOptions.builder().timeout(Duration.ofSeconds(2)).build();

    m.start(ProcessSpec.pipes(List.of("true")).withOptions(call));

    assertThat(sessions.lastSpec().options().timeout()).isEqualTo(Duration.ofSeconds(2));
  }

  // ---- approval ----

  @Test
  void approvalAsksForTerminalSessionsWithTtySet() {
    ProcessManager m =
        managerOf(
            Runners.withApproval(backend, answering(Decision.ALLOW), ExecPredicate.interactive()));

    ProcessSession h = m.start(new ProcessSpec("t", List.of("bash", "-l"), true, 0, 0, null));

    assertThat(asked).hasSize(1);
    ApprovalRequest req = asked.get(0);
    assertThat(req.exec().tty()).isTrue();
    assertThat(req.exec().command()).isEqualTo("bash");
    assertThat(req.exec().args()).containsExactly("-l");
    assertThat(req.reason()).isEqualTo("interactive TTY session start");
    assertThat(h.id()).isEqualTo("t");
    assertThat(sessions.lastSpec().tty()).isTrue();
  }

  @Test
  void approvalDoesNotAskForPipeSessions() {
    ProcessManager m =
        managerOf(
            Runners.withApproval(backend, answering(Decision.DENY), ExecPredicate.interactive()));

    m.start(ProcessSpec.pipes(List.of("bash", "-c", "true")));

    assertThat(asked).isEmpty();
    assertThat(sessions.specs()).hasSize(1);
  }

  @Test
  void aDeniedTerminalSessionNeverReachesTheBackend() {
    ProcessManager m =
        managerOf(
            Runners.withApproval(backend, answering(Decision.DENY), ExecPredicate.interactive()));

    assertThatThrownBy(() -> m.start(ProcessSpec.terminal(List.of("bash"))))
        .hasMessageContaining("interactive TTY session start")
        .extracting(ProcessManagerOfTest::kindOf)
        .isEqualTo(Kind.POLICY_DENIED);
    assertThat(asked).hasSize(1);
    assertThat(sessions.specs()).isEmpty();
  }

  @Test
  void approvalWithoutAnApproverFailsClosed() {
    ProcessManager m = managerOf(Runners.withApproval(backend, null, ExecPredicate.interactive()));
    assertThatThrownBy(() -> m.start(ProcessSpec.terminal(List.of("bash"))))
        .extracting(ProcessManagerOfTest::kindOf)
        .isEqualTo(Kind.POLICY_DENIED);
    assertThat(sessions.specs()).isEmpty();
  }

  // ---- a backend without sessions ----

  @Test
  void aDecoratorOverABackendWithoutSessionsIsNotAvailable() {
    FakeRunner plain = new FakeRunner();
    for (Runner r :
        List.of(
            Runners.allowCommands(plain, List.of("ls")),
            Runners.withDefaults(plain, null),
            Runners.withApproval(plain, answering(Decision.ALLOW), ExecPredicate.interactive()))) {
      ProcessManager m = managerOf(r);
      assertThatThrownBy(() -> m.start(ProcessSpec.terminal(List.of("ls"))))
          .extracting(ProcessManagerOfTest::kindOf)
          .isEqualTo(Kind.NOT_AVAILABLE);
      assertThatThrownBy(m::list)
          .extracting(ProcessManagerOfTest::kindOf)
          .isEqualTo(Kind.NOT_AVAILABLE);
      assertThatThrownBy(() -> m.terminate("x"))
          .extracting(ProcessManagerOfTest::kindOf)
          .isEqualTo(Kind.NOT_AVAILABLE);
    }
    assertThat(plain.callCount()).isZero();
  }

  @Test
  void theAllowListStillRefusesFirstOverABackendWithoutSessions() {
    ProcessManager m = managerOf(Runners.allowCommands(new NoopRunner(), List.of("ls")));
    assertThatThrownBy(() -> m.start(ProcessSpec.pipes(List.of("rm"))))
        .extracting(ProcessManagerOfTest::kindOf)
        .isEqualTo(Kind.POLICY_DENIED);
  }

  // ---- listing and terminating through decorators ----

  @Test
  void listAndTerminateGoStraightToTheBackend() {
    ProcessManager m =
        managerOf(Runners.withDefaults(Runners.allowCommands(backend, List.of("sleep")), null));
    ProcessSession h = m.start(new ProcessSpec("s", List.of("sleep", "100"), false, 0, 0, null));

    assertThat(m.list()).isEqualTo(sessions.list());
    m.terminate("s");
    assertThat(m.list().get(0).exit().reason()).isEqualTo(ProcessExit.Reason.TERMINATED);
    assertThatThrownBy(() -> m.terminate("nope"))
        .extracting(ProcessManagerOfTest::kindOf)
        .isEqualTo(Kind.NOT_FOUND);

    h.close();
    assertThat(m.list()).isEmpty();
  }

  // ---- composeLocal ----

  @Test
  void aComposedLocalPolicyAppliesEveryLayerToSessions() {
    ExecOptions defaults =
        ExecOptions.builder().timeout(Duration.ofSeconds(30)).env(EnvPolicy.allow("PATH")).build();
    LocalPolicy policy =
        new LocalPolicy(
            defaults,
            List.of("ls", "bash", "rm"),
            answering(Decision.ALLOW),
            List.of(ExecPredicate.interactive(), ExecPredicate.commandPatterns("rm")));
    ProcessManager m = managerOf(Runners.composeLocal(backend, policy));

    // Allowed, not flagged: runs with the defaults merged in, without asking.
    ExecOptions call = ExecOptions.builder().env(EnvPolicy.allow("PATH", "HOME")).build();
    m.start(new ProcessSpec("ls", List.of("ls"), false, 0, 0, call));
    assertThat(asked).isEmpty();
    assertThat(sessions.lastSpec().options().timeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(sessions.lastSpec().options().env().allow()).containsExactly("PATH");

    // Flagged as interactive: the approver sees the effective (merged) options.
    m.start(new ProcessSpec("sh", List.of("bash"), true, 0, 0, null));
    assertThat(asked).singleElement().satisfies(r -> assertThat(r.exec().tty()).isTrue());
    assertThat(asked.get(0).exec().options().timeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(sessions.specs()).hasSize(2);

    // Not on the allow-list: refused even though nothing flags it.
    assertThatThrownBy(() -> m.start(ProcessSpec.pipes(List.of("curl", "x"))))
        .extracting(ProcessManagerOfTest::kindOf)
        .isEqualTo(Kind.POLICY_DENIED);
    assertThat(sessions.specs()).hasSize(2);
    assertThat(m.list()).extracting(ProcessInfo::id).containsExactlyInAnyOrder("ls", "sh");
  }

  @Test
  void approvalCannotGetPastTheComposedAllowList() {
    LocalPolicy policy =
        new LocalPolicy(
            null,
            List.of("ls"),
            answering(Decision.ALLOW),
            List.of(ExecPredicate.commandPatterns("rm")));
    ProcessManager m = managerOf(Runners.composeLocal(backend, policy));

    assertThatThrownBy(() -> m.start(ProcessSpec.pipes(List.of("rm", "-rf", "/"))))
        .extracting(ProcessManagerOfTest::kindOf)
        .isEqualTo(Kind.POLICY_DENIED);
    // The approver sits above the allow-list, so it was asked first; the allow-list still refused.
    assertThat(asked).hasSize(1);
    assertThat(sessions.specs()).isEmpty();
  }

  @Test
  void aComposedPolicyOverABackendWithoutSessionsIsNotAvailable() {
    ProcessManager m =
        managerOf(Runners.composeLocal(new NoopRunner(), LocalPolicy.defaults("/tmp", null)));
    assertThatThrownBy(() -> m.start(ProcessSpec.pipes(List.of("ls"))))
        .extracting(ProcessManagerOfTest::kindOf)
        .isEqualTo(Kind.NOT_AVAILABLE);
    assertThatThrownBy(m::list)
        .extracting(ProcessManagerOfTest::kindOf)
        .isEqualTo(Kind.NOT_AVAILABLE);
  }

  @Test
  void execThroughTheSameChainStillWorks() {
    Runner r = Runners.allowCommands(backend, List.of("ls"));
    r.exec("ls", List.of("-l"), null);
    assertThat(execs.lastRequest().command()).isEqualTo("ls");
    assertThat(sessions.specs()).isEmpty();
  }
}
