package dev.confine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class RawArgumentsTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static final byte[] NOT_UTF8 = HexFormat.of().parseHex("ff41");

  @Test
  void theTailOfTheRawVectorReplacesTheArgumentsTheJvmDecodedLossily() {
    List<byte[]> raw = List.of(b("java"), b("-cp"), b("x"), b("Main"), b("exec"), NOT_UTF8);
    String[] args = {"exec", "\uFFFDA"};
    assertThat(RawArguments.mapped(raw, args, StandardCharsets.UTF_8))
        .containsExactly("exec", "\uDCFFA");
  }

  @Test
  void underAnAsciiLocaleEvenUtf8ComesBackExactly() {
    List<byte[]> raw = List.of(b("java"), b("Main"), b("é"));
    String[] args = {new String(b("é"), StandardCharsets.US_ASCII)};
    assertThat(RawArguments.mapped(raw, args, StandardCharsets.US_ASCII)).containsExactly("é");
  }

  @Test
  void aVectorThatDoesNotEndInTheArgumentsLeavesThemAsTheJvmGaveThem() {
    String[] args = {"exec", "ls"};
    // an @argfile: the arguments are not on the command line
    List<byte[]> argfile = List.of(b("java"), b("@opts"));
    assertThat(RawArguments.mapped(argfile, args, StandardCharsets.UTF_8)).isSameAs(args);
    List<byte[]> other = List.of(b("java"), b("Main"), b("exec"), b("pwd"));
    assertThat(RawArguments.mapped(other, args, StandardCharsets.UTF_8)).isSameAs(args);
    assertThat(RawArguments.mapped(List.of(b("exec"), b("ls")), args, StandardCharsets.UTF_8))
        .isSameAs(args);
  }

  @Test
  void cmdlineIsSplitAtEachNul() {
    assertThat(RawArguments.split(new byte[] {'a', 0, 0, 'b', 0}))
        .containsExactly(b("a"), b(""), b("b"));
    assertThat(RawArguments.split(new byte[] {'a', 0, 'b'})).containsExactly(b("a"), b("b"));
  }
}
