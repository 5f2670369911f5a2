package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.testing.CallingThread;
import dev.confine.testing.HostRequirements;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A confined exec's output streams are written by a thread the caller started, never by one the
 * confinement thread started (which would carry its seccomp filter, Landlock domain and namespaces
 * into the caller's stream), and the child's output reaches them as it does unconfined.
 */
@Tag("confinement")
class ConfinedStreamedOutputTest {
  @TempDir Path root;

  /** Records, from inside its first write, what the writing thread may do; keeps the bytes. */
  private static final class Spy extends OutputStream {
    final AtomicReference<String> seen = new AtomicReference<>();
    final ByteArrayOutputStream got = new ByteArrayOutputStream();

    @Override
    public void write(int b) {
      throw new UnsupportedOperationException();
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
      if (seen.get() == null) {
        seen.set(CallingThread.confinement());
      }
      got.write(b, off, len);
    }
  }

  @Test
  void rootlessTheStreamIsWrittenByAnUnconfinedThread() {
    streamIsWrittenUnconfined(true);
  }

  @Test
  @Tag("root")
  void withNamespacesTheStreamIsWrittenByAThreadInTheHostsNamespaces() {
    HostRequirements.requireRoot();
    streamIsWrittenUnconfined(false);
  }

  private void streamIsWrittenUnconfined(boolean rootless) {
    HostRequirements.require(Landlock.availability());
    HostRequirements.require(SeccompFilter.availability());
    Spy out = new Spy();
    Spy err = new Spy();
    ExecResult r =
        ConfinedRunner.builder(root.toString())
            .rootless(rootless)
            .build()
            .exec(
                "sh",
                List.of("-c", "echo out; echo err >&2; exit 4"),
                ExecOptions.builder()
                    .stdoutStream(out)
                    .stderrStream(err)
                    .net(NetPolicy.denyAll())
                    .timeout(Duration.ofSeconds(30))
                    .build());
    assertThat(r.exitCode()).isEqualTo(4);
    assertThat(r.stdout()).isEmpty();
    assertThat(out.got.toString(StandardCharsets.UTF_8)).isEqualTo("out\n");
    assertThat(err.got.toString(StandardCharsets.UTF_8)).isEqualTo("err\n");
    for (Spy s : List.of(out, err)) {
      assertThat(s.seen.get()).isEqualTo("NoNewPrivs:0 Seccomp:0 net=host mnt=host inet=ok");
    }
  }
}
