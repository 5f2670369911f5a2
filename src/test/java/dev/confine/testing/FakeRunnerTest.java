package dev.confine.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ExecOptions;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.SandboxException;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

class FakeRunnerTest {
  @Test
  void answersFromTheQueueInOrderThenFromTheResponder() {
    FakeRunner fake = new FakeRunner();
    SandboxException timeout = new SandboxException(SandboxException.Kind.TIMEOUT, "slow");
    fake.enqueue(ExecResult.of(1, "a", "")).enqueueFailure(timeout);
    fake.respondWith(req -> ExecResult.of(0, req.command() + " " + req.args(), ""));

    assertThat(fake.exec("x", List.of(), null).exitCode()).isEqualTo(1);
    assertThatThrownBy(() -> fake.exec("y", List.of(), null)).isSameAs(timeout);
    assertThat(fake.exec("z", List.of("1"), null).stdoutText()).isEqualTo("z [1]");
    assertThat(fake.pending()).isZero();
  }

  @Test
  void defaultAnswerIsExitZero() {
    assertThat(new FakeRunner().exec("x", null, null)).isEqualTo(ExecResult.ofExit(0));
  }

  @Test
  void recordsEveryRequestIncludingFailedOnes() {
    FakeRunner fake = new FakeRunner();
    fake.enqueueFailure(new IllegalStateException("scripted"));
    assertThatThrownBy(() -> fake.exec("a", List.of("1"), null))
        .isInstanceOf(IllegalStateException.class);
    fake.exec("b", List.of(), ExecOptions.builder().workDir("w").build());
    assertThat(fake.requests()).extracting(ExecRequest::command).containsExactly("a", "b");
    assertThat(fake.lastRequest().options().workDir()).isEqualTo("w");
    assertThat(fake.callCount()).isEqualTo(2);

    fake.reset();
    assertThat(fake.callCount()).isZero();
    assertThatIllegalStateException().isThrownBy(fake::lastRequest);
  }

  @Test
  void rejectsMalformedRequestsLikeARealRunner() {
    FakeRunner fake = new FakeRunner();
    assertThatThrownBy(() -> fake.exec(null, List.of(), null)).isInstanceOf(SandboxException.class);
    assertThat(fake.callCount()).isZero();
  }

  @Test
  void isSafeUnderConcurrentUse() throws Exception {
    FakeRunner fake = new FakeRunner();
    try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
      for (int i = 0; i < 1000; i++) {
        String cmd = "c" + i;
        pool.submit(() -> fake.exec(cmd, List.of(), null));
      }
    }
    assertThat(fake.callCount()).isEqualTo(1000);
    assertThat(fake.requests()).extracting(ExecRequest::command).doesNotHaveDuplicates();
  }

  @Test
  void streamedOutputGoesToTheStreamsAsTheRealRunnersSendIt() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    FakeRunner fake = new FakeRunner();
    fake.enqueue(ExecResult.of(3, "to out", "to err").toBuilder().stdoutTruncated(true).build());
    ExecResult r =
        fake.exec(
            "make", List.of(), ExecOptions.builder().stdoutStream(out).stderrStream(err).build());
    assertThat(out.toString(UTF_8)).isEqualTo("to out");
    assertThat(err.toString(UTF_8)).isEqualTo("to err");
    assertThat(r.stdout()).isEmpty();
    assertThat(r.stderr()).isEmpty();
    assertThat(r.exitCode()).isEqualTo(3);
    assertThat(r.stdoutTruncated()).isTrue();
  }
}
