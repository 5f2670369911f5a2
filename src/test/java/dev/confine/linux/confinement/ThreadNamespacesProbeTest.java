package dev.confine.linux.confinement;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.testing.HostNamespaces;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The namespace probe enters both namespaces on a throwaway thread. In a fresh JVM where it is the
 * first use of the engine, nothing it touches may start a JVM thread (the common Cleaner behind
 * automatic arenas, say) that would then live in the probe's namespaces for good.
 */
@Tag("confinement")
class ThreadNamespacesProbeTest {
  @Test
  void theProbeLeavesNoJvmThreadInAPrivateNamespace() throws Exception {
    String out = runJava(NamespaceProbeMain.class.getName());
    // The probe thread itself may still be exiting in the kernel after join() returned.
    assertThat(out.replaceAll("confine-namespa \\((net|mnt)\\)(, )?", ""))
        .containsPattern("foreign=\\[(, )?]\n");
    if (HostRequirements.isRoot()) {
      assertThat(out).contains("network=available").contains("mount=available");
    } else {
      assertThat(out).contains("network=needs root");
    }
  }

  @Test
  void inThisJvmOnlyConfinementThreadsAreInPrivateNamespaces() throws IOException {
    assertThat(HostNamespaces.threadsOutside())
        .allSatisfy(name -> assertThat(name).matches("confine-(confine|namespa) .*"));
  }

  private static String runJava(String mainClass) throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p =
        new ProcessBuilder(
                java,
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                mainClass)
            .redirectErrorStream(true)
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }
}
