package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ByteStringsTest {
  private static byte[] hex(String h) {
    return HexFormat.of().parseHex(h);
  }

  @Test
  void bytesThatAreNotUtf8AreCarriedAsLoneSurrogatesAndComeBackExactly() {
    byte[] raw = hex("fffe80616263");
    String s = ByteStrings.decode(raw);
    assertThat(s).isEqualTo("\uDCFF\uDCFE\uDC80abc");
    assertThat(ByteStrings.encode(s)).isEqualTo(raw);
    assertThat(ByteStrings.isText(s)).isFalse();
  }

  @Test
  void wellFormedUtf8IsPlainTextBothWays() {
    String text = "a é € 😀 \u0000 z";
    byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
    assertThat(ByteStrings.decode(utf8)).isEqualTo(text);
    assertThat(ByteStrings.encode(text)).isEqualTo(utf8);
    assertThat(ByteStrings.isText(text)).isTrue();
  }

  @Test
  void everyIllFormedSequenceIsEscapedBytewise() {
    // overlong NUL, an encoded surrogate, past U+10FFFF, a truncated 3-byte sequence before ASCII,
    // a lone continuation byte, a 4-byte lead at the very end
    for (String h : new String[] {"c080", "eda080", "f4908080", "e28241", "bf", "f0", "f09f98"}) {
      byte[] raw = hex(h);
      String s = ByteStrings.decode(raw);
      assertThat(ByteStrings.encode(s)).as(h).isEqualTo(raw);
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        assertThat(c < 0x80 || (c >= 0xDC80 && c <= 0xDCFF)).as(h + " char " + i).isTrue();
      }
    }
    assertThat(ByteStrings.decode(hex("e28241"))).isEqualTo("\uDCE2\uDC82A");
    // the edges of the well-formed ranges are text
    for (String h :
        new String[] {"c280", "dfbf", "e0a080", "ed9fbf", "ee8080", "f0908080", "f48fbfbf"}) {
      assertThat(ByteStrings.isText(ByteStrings.decode(hex(h)))).as(h).isTrue();
    }
  }

  @Test
  void anyByteStringRoundTripsAndUtf8DecodesAsTheJdkDoes() {
    Random random = new Random(15);
    for (int n = 0; n < 20_000; n++) {
      byte[] raw = new byte[random.nextInt(12)];
      for (int i = 0; i < raw.length; i++) {
        // biased towards lead and continuation bytes, where the edge cases are
        raw[i] = (byte) (random.nextBoolean() ? 0x80 + random.nextInt(0x80) : random.nextInt(256));
      }
      String s = ByteStrings.decode(raw);
      assertThat(ByteStrings.encode(s)).isEqualTo(raw);
      if (ByteStrings.isText(s)) {
        assertThat(s).isEqualTo(new String(raw, StandardCharsets.UTF_8));
      }
    }
  }

  @Test
  void anUnpairedSurrogateThatStandsForNoByteIsWrittenAsAQuestionMark() {
    assertThat(ByteStrings.encode("a\uD800b")).isEqualTo("a?b".getBytes(StandardCharsets.US_ASCII));
    assertThat(ByteStrings.encode("\uDC41")).isEqualTo(new byte[] {'?'});
    assertThat(ByteStrings.isText("\uD800")).isFalse();
  }

  @Test
  void decodingASliceDecodesOnlyThatSlice() {
    byte[] raw = hex("41ff42");
    assertThat(ByteStrings.decode(raw, 1, 2)).isEqualTo("\uDCFFB");
  }
}
