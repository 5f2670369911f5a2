package dev.confine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecResult;
import dev.confine.ResourceUsage;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class JsonOutputTest {
  @Test
  void successHasEveryKeyInOrder() {
    ExecResult r =
        ExecResult.of(0, "hi\n", "").toBuilder()
            .wallTime(Duration.ofMillis(12))
            .childTime(Duration.ofMillis(3))
            .build();
    assertThat(JsonOutput.of(Outcome.of(r)))
        .isEqualTo(
            "{\"exit_code\":0,\"signal\":null,\"stdout\":\"hi\\n\",\"stderr\":\"\","
                + "\"stdout_truncated\":false,\"stderr_truncated\":false,\"wall_ms\":12,\"child_ms\":3,"
                + "\"error\":null"
                + ",\"usage\":{\"peak_memory_bytes\":null,\"cpu_user_ms\":null,\"cpu_system_ms\":null,\"pids_limit_hit\":false}}");
  }

  @Test
  void signalledChildHasCodeMinusOneAndTheSignal() {
    ExecResult r = ExecResult.builder().signal(9).stdoutTruncated(true).build();
    assertThat(JsonOutput.of(Outcome.of(r)))
        .isEqualTo(
            "{\"exit_code\":-1,\"signal\":9,\"stdout\":\"\",\"stderr\":\"\","
                + "\"stdout_truncated\":true,\"stderr_truncated\":false,\"wall_ms\":0,\"child_ms\":0,"
                + "\"error\":null"
                + ",\"usage\":{\"peak_memory_bytes\":null,\"cpu_user_ms\":null,\"cpu_system_ms\":null,\"pids_limit_hit\":false}}");
  }

  @Test
  void errorWithAPartialResultReportsThePartialResult() {
    ExecResult partial =
        ExecResult.builder()
            .signal(9)
            .stdout("so far".getBytes(StandardCharsets.UTF_8))
            .stderrTruncated(true)
            .wallTime(Duration.ofNanos(1_500_250_000))
            .childTime(Duration.ofNanos(1_500_000_000))
            .build();
    SandboxException e =
        new SandboxException(Kind.TIMEOUT, "sandbox: timed out after 1.5s", null, partial);
    assertThat(JsonOutput.of(Outcome.of(e)))
        .isEqualTo(
            "{\"exit_code\":-1,\"signal\":9,\"stdout\":\"so far\",\"stderr\":\"\","
                + "\"stdout_truncated\":false,\"stderr_truncated\":true,\"wall_ms\":1500.25,\"child_ms\":1500,"
                + "\"error\":{\"kind\":\"TIMEOUT\",\"message\":\"sandbox: timed out after 1.5s\"}"
                + ",\"usage\":{\"peak_memory_bytes\":null,\"cpu_user_ms\":null,\"cpu_system_ms\":null,\"pids_limit_hit\":false}}");
  }

  @Test
  void errorBeforeStartHasTheEmptyFields() {
    SandboxException e = new SandboxException(Kind.NOT_FOUND, "sandbox: \"nope\" not found");
    assertThat(JsonOutput.of(Outcome.of(e)))
        .isEqualTo(
            "{\"exit_code\":-1,\"signal\":null,\"stdout\":\"\",\"stderr\":\"\","
                + "\"stdout_truncated\":false,\"stderr_truncated\":false,\"wall_ms\":0,\"child_ms\":0,"
                + "\"error\":{\"kind\":\"NOT_FOUND\",\"message\":\"sandbox: \\\"nope\\\" not found\"}"
                + ",\"usage\":{\"peak_memory_bytes\":null,\"cpu_user_ms\":null,\"cpu_system_ms\":null,\"pids_limit_hit\":false}}");
  }

  @Test
  void usageHoldsWhatWasMeasuredAndNullForTheRest() {
    ExecResult r =
        ExecResult.builder()
            .usage(new ResourceUsage(1 << 20, Duration.ofMillis(15), null, true))
            .build();
    assertThat(JsonOutput.of(Outcome.of(r)))
        .endsWith(
            ",\"usage\":{\"peak_memory_bytes\":1048576,\"cpu_user_ms\":15,"
                + "\"cpu_system_ms\":null,\"pids_limit_hit\":true}}");
  }

  @Test
  void escapesQuotesBackslashesAndEveryControlCharacter() {
    StringBuilder in = new StringBuilder("\"\\/\n\t\r");
    for (char c = 0; c < 0x20; c++) {
      in.append(c);
    }
    in.append('\u007f').append("é€😀");
    String expected =
        "\"\\\"\\\\/\\n\\t\\r"
            + "\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\u0008\\t\\n\\u000b"
            + "\\u000c\\r\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017"
            + "\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f"
            + "\u007fé€😀\"";
    assertThat(JsonString.quote(in.toString())).isEqualTo(expected);

    ExecResult r = ExecResult.of(0, "", in.toString());
    assertThat(JsonOutput.of(Outcome.of(r))).contains("\"stderr\":" + expected + ",");
  }

  @Test
  void malformedUtf8BecomesTheReplacementCharacter() {
    byte[] bytes = {'a', (byte) 0xff, 'b', (byte) 0xc3}; // a stray byte and a cut-off sequence
    ExecResult r = ExecResult.builder().stdout(bytes).build();
    assertThat(JsonOutput.of(Outcome.of(r))).contains("\"stdout\":\"a\ufffdb\ufffd\"");
  }

  @Test
  void theStreamedOutputEscapesAsTheStringItDecodesTo() {
    // Random bytes around the writer's buffer sizes: every split of a multi-byte sequence,
    // malformed
    // input and surrogate pairs must come out as JsonString would quote new String(bytes, UTF_8).
    java.util.Random random = new java.util.Random(15);
    byte[] alphabet = "a\"\\\n\u0001".getBytes(StandardCharsets.UTF_8);
    byte[][] pieces = {
      alphabet,
      "é".getBytes(StandardCharsets.UTF_8),
      "€".getBytes(StandardCharsets.UTF_8),
      "😀".getBytes(StandardCharsets.UTF_8),
      {(byte) 0xff},
      {(byte) 0xc3},
      {(byte) 0xf0, (byte) 0x9f}
    };
    for (int round = 0; round < 200; round++) {
      java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
      int target = random.nextInt(3) == 0 ? 4096 + random.nextInt(16) : random.nextInt(40_000);
      while (bytes.size() < target) {
        byte[] p = pieces[random.nextInt(pieces.length)];
        if (p == alphabet) {
          bytes.write(p[random.nextInt(p.length)]);
        } else {
          bytes.writeBytes(p);
        }
      }
      byte[] out = bytes.toByteArray();
      ExecResult r = ExecResult.builder().stdout(out).build();
      assertThat(JsonOutput.of(Outcome.of(r)))
          .as("round %d", round)
          .contains(
              "\"stdout\":"
                  + JsonString.quote(new String(out, StandardCharsets.UTF_8))
                  + ",\"stderr\":\"\",");
    }
  }

  @ParameterizedTest
  @CsvSource({
    "0, 0",
    "1, 0",
    "499, 0",
    "500, 0.001",
    "1000, 0.001",
    "1234567, 1.235",
    "1500000, 1.5",
    "12000000, 12",
    "1000000000, 1000",
    "90061001000000, 90061001",
  })
  void wallTimeIsMillisecondsWithAtMostThreeDecimals(long nanos, String ms) {
    assertThat(JsonOutput.millis(Duration.ofNanos(nanos))).isEqualTo(ms);
  }
}
