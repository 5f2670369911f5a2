package dev.confine.host;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ByteStrings;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link GoQuote} against what Go's {@code strconv.Quote} gives (its own test table and more). */
class GoQuoteTest {

  static Stream<Arguments> goCases() {
    return Stream.of(
        // strconv's quotetests
        Arguments.of("\u0007\b\f\r\n\t\u000b", "\"\\a\\b\\f\\r\\n\\t\\v\""),
        Arguments.of("\\", "\"\\\\\""),
        Arguments.of("\u263a", "\"\u263a\""),
        Arguments.of("\udbff\udfff", "\"\\U0010ffff\""),
        Arguments.of("\u0004", "\"\\x04\""),
        Arguments.of("!\u00a0!\u2000!\u3000!", "\"!\\u00a0!\\u2000!\\u3000!\""),
        Arguments.of("\u007f", "\"\\x7f\""),
        // more
        Arguments.of("", "\"\""),
        Arguments.of("abc\u00ffdef", "\"abc\u00ffdef\""), // the letter U+00FF, not the byte
        Arguments.of("plain text", "\"plain text\""),
        Arguments.of("say \"hi\"", "\"say \\\"hi\\\"\""),
        Arguments.of("'single'", "\"'single'\""),
        Arguments.of("\u0000", "\"\\x00\""),
        Arguments.of("\u001b[31m", "\"\\x1b[31m\""),
        Arguments.of("\u0085", "\"\\u0085\""), // C1 control
        Arguments.of("\ufeff", "\"\\ufeff\""), // format character
        Arguments.of("\u200b", "\"\\u200b\""), // zero width space, a format character
        Arguments.of("\u2028", "\"\\u2028\""), // line separator
        Arguments.of("\ue000", "\"\\ue000\""), // private use
        Arguments.of("\udb40\udc01", "\"\\U000e0001\""), // language tag, a format character
        Arguments.of("\ud83d\ude00", "\"\ud83d\ude00\""), // an emoji is a symbol: printed
        Arguments.of("e\u0301", "\"e\u0301\""), // a combining mark is printed
        Arguments.of("\u00e9t\u00e9", "\"\u00e9t\u00e9\""),
        Arguments.of("\ufffd", "\"\ufffd\""), // the replacement character itself is printable
        Arguments.of("/tmp/a b", "\"/tmp/a b\""));
  }

  @ParameterizedTest
  @MethodSource("goCases")
  void quotesAsGo(String in, String expected) {
    assertThat(GoQuote.of(in)).isEqualTo(expected);
  }

  static Stream<Arguments> byteCases() {
    return Stream.of(
        // a byte that is not UTF-8 is \xNN (strconv's "abc\xffdef")
        Arguments.of(new byte[] {'a', 'b', 'c', (byte) 0xff, 'd', 'e', 'f'}, "\"abc\\xffdef\""),
        Arguments.of(new byte[] {(byte) 0xff}, "\"\\xff\""),
        Arguments.of(new byte[] {'a', (byte) 0x80, 'b'}, "\"a\\x80b\""),
        // overlong, a UTF-8 encoded surrogate, truncated, above U+10FFFF: byte by byte, as Go
        Arguments.of(new byte[] {(byte) 0xc0, (byte) 0x80}, "\"\\xc0\\x80\""),
        Arguments.of(new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, "\"\\xed\\xa0\\x80\""),
        Arguments.of(new byte[] {(byte) 0xe2, (byte) 0x82}, "\"\\xe2\\x82\""),
        Arguments.of(
            new byte[] {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
            "\"\\xf4\\x90\\x80\\x80\""),
        // a bad byte next to good text: the text stays text
        Arguments.of(new byte[] {(byte) 0xc3, (byte) 0xa9, (byte) 0xff}, "\"\u00e9\\xff\""),
        // well-formed UTF-8 of a character Go escapes
        Arguments.of(new byte[] {(byte) 0xc2, (byte) 0xa0}, "\"\\u00a0\""));
  }

  @ParameterizedTest
  @MethodSource("byteCases")
  void quotesBytesAsGoQuotesTheSameBytes(byte[] bytes, String expected) {
    assertThat(GoQuote.of(ByteStrings.decode(bytes))).isEqualTo(expected);
  }

  @Test
  void escapesThatSpellWellFormedUtf8AreThatCharacter() {
    // U+DCC3 U+DCA9 carry the bytes C3 A9, which Go reads as é.
    assertThat(GoQuote.of("\udcc3\udca9")).isEqualTo("\"\u00e9\"");
    assertThat(GoQuote.of("x\udcc3\udca9\udcff")).isEqualTo("\"x\u00e9\\xff\"");
  }

  @Test
  void anUnpairedSurrogateThatIsNoByteStaysVisible() {
    assertThat(GoQuote.of("a\ud800b")).isEqualTo("\"a\\ud800b\"");
    assertThat(GoQuote.of("\udd00")).isEqualTo("\"\\udd00\"");
  }

  @Test
  void nullIsNull() {
    assertThat(GoQuote.of(null)).isEqualTo("null");
  }

  @Test
  void printableIsGosIsPrint() {
    assertThat(GoQuote.isPrint(' ')).isTrue();
    assertThat(GoQuote.isPrint('a')).isTrue();
    assertThat(GoQuote.isPrint('~')).isTrue();
    assertThat(GoQuote.isPrint('\t')).isFalse();
    assertThat(GoQuote.isPrint(0x00a0)).isFalse();
    assertThat(GoQuote.isPrint(0x0378)).isFalse(); // unassigned
  }

  @Test
  void printableIsGosDefinition() {
    assertThat(GoQuote.isPrint(' ')).isTrue();
    assertThat(GoQuote.isPrint('~')).isTrue();
    assertThat(GoQuote.isPrint(0x7f)).isFalse();
    assertThat(GoQuote.isPrint(0x1f)).isFalse();
    assertThat(GoQuote.isPrint(0x00a0)).isFalse(); // a space other than ASCII's
    assertThat(GoQuote.isPrint(0x0301)).isTrue(); // a mark
    assertThat(GoQuote.isPrint(0x1f600)).isTrue(); // a symbol
    assertThat(GoQuote.isPrint(0x10ffff)).isFalse(); // a noncharacter, unassigned
  }
}
