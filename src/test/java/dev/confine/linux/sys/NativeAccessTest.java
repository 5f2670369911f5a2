package dev.confine.linux.sys;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class NativeAccessTest {
  @Test
  void isAvailableInTheTestJvm() {
    assertThat(NativeAccess.availability().unavailabilityCause()).isEmpty();
    assertThat(NativeAccess.availability().isAvailable()).isTrue();
  }

  @Test
  void withoutNativeAccessEveryCallNamesTheExactFlag() throws Exception {
    String out = runJava(List.of(), NativeAccessProbe.class.getName());
    assertThat(out)
        .contains("available=false")
        .contains("start java with --enable-native-access=ALL-UNNAMED")
        .contains("exec=NOT_AVAILABLE")
        .contains("enforcement=NONE");
  }

  @Test
  void withNativeAccessTheProbeInAFreshJvmRuns() throws Exception {
    String out =
        runJava(List.of("--enable-native-access=ALL-UNNAMED"), NativeAccessProbe.class.getName());
    assertThat(out).contains("available=true").contains("exec=ok:hi");
  }

  private static String runJava(List<String> jvmArgs, String mainClass)
      throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new java.util.ArrayList<>();
    cmd.add(java);
    cmd.addAll(jvmArgs);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }
}
