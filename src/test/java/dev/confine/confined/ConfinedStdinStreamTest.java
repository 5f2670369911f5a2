package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.testing.CallingThread;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stdin stream of a confined exec is read by a thread the caller started, never by one the
 * confinement thread started: a thread inherits its creator's seccomp filter, Landlock domain,
 * no_new_privs and namespaces, and the stream is the caller's, to be read with the caller's rights.
 */
@Tag("confinement")
class ConfinedStdinStreamTest {
  @TempDir Path root;

  /** Records, from inside its first read, what the reading thread may do; then gives "ok\n". */
  private static final class Spy extends InputStream {
    final AtomicReference<String> seen = new AtomicReference<>();
    private boolean done;

    @Override
    public int read() {
      throw new UnsupportedOperationException();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (done) {
        return -1;
      }
      done = true;
      seen.set(CallingThread.confinement());
      byte[] ok = "ok\n".getBytes(StandardCharsets.UTF_8);
      System.arraycopy(ok, 0, b, off, ok.length);
      return ok.length;
    }
  }

  @Test
  void rootlessTheStreamIsReadByAnUnconfinedThread() {
    streamIsReadUnconfined(true);
  }

  @Test
  @Tag("root")
  void withNamespacesTheStreamIsReadByAThreadInTheHostsNamespaces() {
    HostRequirements.requireRoot();
    streamIsReadUnconfined(false);
  }

  private void streamIsReadUnconfined(boolean rootless) {
    HostRequirements.require(Landlock.availability());
    HostRequirements.require(SeccompFilter.availability());
    Spy spy = new Spy();
    ExecResult r =
        ConfinedRunner.builder(root.toString())
            .rootless(rootless)
            .build()
            .exec(
                "cat",
                List.of(),
                ExecOptions.builder()
                    .stdinStream(spy)
                    .net(NetPolicy.denyAll())
                    .timeout(Duration.ofSeconds(30))
                    .build());
    assertThat(r.stdoutText()).isEqualTo("ok\n");
    assertThat(spy.seen.get()).isEqualTo("NoNewPrivs:0 Seccomp:0 net=host mnt=host inet=ok");
  }
}
