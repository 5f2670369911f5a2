package dev.confine.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HostEnvironmentTest {
  private static byte[] environ(String... hexEntries) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (String h : hexEntries) {
      out.writeBytes(HexFormat.of().parseHex(h));
      out.write(0);
    }
    return out.toByteArray();
  }

  private static String hex(String s) {
    return HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void valuesThatAreNotUtf8KeepTheirBytesWhenTheRestMatchesWhatTheJvmDecoded() {
    byte[] raw = environ(hex("A=1"), hex("B=") + "ff" + hex("x"));
    Map<String, String> exact =
        HostEnvironment.matching(raw, Map.of("A", "1", "B", "\uFFFDx"), StandardCharsets.UTF_8);
    assertThat(exact).containsExactly(Map.entry("A", "1"), Map.entry("B", "\uDCFFx"));
  }

  @Test
  void anyDifferenceFromWhatTheJvmHoldsFallsBackToIt() {
    byte[] raw = environ(hex("A=1"), hex("B=2"));
    assertThat(HostEnvironment.matching(raw, Map.of("A", "1"), StandardCharsets.UTF_8)).isNull();
    assertThat(HostEnvironment.matching(raw, Map.of("A", "1", "B", "3"), StandardCharsets.UTF_8))
        .isNull();
  }

  @Test
  void entriesAreSplitAsTheJdkSplitsThem() {
    // no '=', an empty name, a value holding '=', a name given twice (the first wins)
    byte[] raw = environ(hex("junk"), hex("=x"), hex("A=b=c"), hex("D=1"), hex("D=2"), "");
    assertThat(HostEnvironment.matching(raw, Map.of("A", "b=c", "D", "1"), StandardCharsets.UTF_8))
        .containsExactly(Map.entry("A", "b=c"), Map.entry("D", "1"));
  }

  @Test
  void thisProcessesEnvironmentIsWhatTheJvmSeesWhereItIsText() {
    Map<String, String> env = HostEnvironment.ofThisProcess();
    assertThat(env.keySet()).isEqualTo(System.getenv().keySet());
    env.forEach(
        (k, v) -> {
          if (!System.getenv(k).contains("\uFFFD")) {
            assertThat(v).as(k).isEqualTo(System.getenv(k));
          }
        });
  }
}
