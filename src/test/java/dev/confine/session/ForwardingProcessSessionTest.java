package dev.confine.session;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import dev.confine.testing.FakeSession;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ForwardingProcessSessionTest {
  private static FakeSession terminal() {
    return new FakeSession(ProcessSpec.terminal(List.of("sh")).withId("t"), 42);
  }

  /** Forwards everything. */
  private static class Plain extends ForwardingProcessSession {
    Plain(ProcessSession delegate) {
      super(delegate);
    }
  }

  @Test
  void everyCallGoesToTheDelegateInTurn() throws Exception {
    FakeSession fake = terminal();
    ProcessSession s = new Plain(fake);
    fake.tty("hello");

    assertThat(s.id()).isEqualTo("t");
    assertThat(s.pid()).isEqualTo(42);
    assertThat(s.read(0, 3).bytes()).isEqualTo("hel".getBytes(UTF_8));
    assertThat(s.read(3, 10, Duration.ofSeconds(1)).bytes()).isEqualTo("lo".getBytes(UTF_8));
    ByteBuffer into = ByteBuffer.allocate(8);
    assertThat(s.read(1, into).length()).isEqualTo(4);
    s.write("x".getBytes(UTF_8));
    s.closeStdin();
    s.resize(10, 20);
    assertThat(s.waitFor(Duration.ZERO)).isEmpty();
    assertThat(s.exitValue()).isEmpty();
    s.terminate();
    assertThat(s.waitFor().reason()).isEqualTo(ProcessExit.Reason.TERMINATED);
    s.close();

    assertThat(fake.calls())
        .containsExactly(
            "read:0:3",
            "read:3:10:PT1S",
            "read:1:8", // the fake's buffer read goes through its chunk read
            "write:x",
            "closeStdin",
            "resize:10x20",
            "waitFor:PT0S",
            "terminate",
            "waitFor",
            "close");
    assertThat(fake.stdinText()).isEqualTo("x");
    assertThat(fake.isClosed()).isTrue();
    assertThat(s.toString()).isEqualTo(fake.toString());
  }

  @Test
  void theBufferReadReachesTheDelegatesOwnSoItStillCopiesStraightFromItsLog() throws Exception {
    List<String> reads = new ArrayList<>();
    FakeSession fake = terminal();
    fake.tty("abc");
    ProcessSession counting =
        new Plain(fake) {
          @Override
          public OutputRead read(long afterSeq, ByteBuffer into, Duration timeout)
              throws InterruptedException {
            reads.add("buffer");
            return super.read(afterSeq, into, timeout);
          }
        };
    ProcessSession outer = new Plain(counting);

    outer.read(0, ByteBuffer.allocate(4));
    outer.read(0, ByteBuffer.allocate(4), Duration.ofMillis(1));

    assertThat(reads).containsExactly("buffer", "buffer");
  }

  @Test
  void overridingATimedReadCoversItsUntimedTwin() throws Exception {
    FakeSession fake = terminal();
    fake.tty("abc");
    List<Duration> timeouts = new ArrayList<>();
    ProcessSession s =
        new Plain(fake) {
          @Override
          public ProcessOutput read(long afterSeq, int maxBytes, Duration timeout)
              throws InterruptedException {
            timeouts.add(timeout);
            return super.read(afterSeq, maxBytes, timeout);
          }
        };

    s.read(0, 2);

    assertThat(timeouts).hasSize(1);
    assertThat(timeouts.get(0)).isGreaterThan(Duration.ofDays(365 * 1000L));
  }

  @Test
  void itOffersNeitherSignalsNorEventsOfItsOwn() {
    FakeSession fake = terminal();
    ProcessSession s = new Plain(fake);

    assertThat(ProcessSignaler.of(s)).isEmpty();
    assertThat(ProcessEventSource.of(s)).isEmpty();
    assertThat(ProcessSignaler.of(fake)).isEqualTo(Optional.of(fake));
  }

  @Test
  void aNullDelegateIsRefused() {
    assertThatNullPointerException().isThrownBy(() -> new Plain(null)).withMessage("delegate");
  }
}
