package dev.confine.seatbelt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ByteStrings;
import dev.confine.NetMode;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The profile against the seed's text (flowcraft {@code sdkx/sandbox/seatbelt/profile.go} at tag
 * {@code sdkx/v0.5.5}), whole, for every mode; and the path quoting against Go's {@code
 * strconv.Quote}, whose outputs below follow its rules (quote.go's {@code quoteWith} and {@code
 * appendEscapedRune}, {@code IsPrint}).
 */
class SeatbeltProfileTest {
  private static final String HEAD =
      """
      (version 1)
      (allow default)
      (deny file-write*)
      """;

  private static final String DEV_NULL = "(allow file-write* (literal \"/dev/null\"))\n";

  private static String restricted(int port) {
    return """
        ; platform sockets macOS needs for TLS + network config;
        ; without these the blanket network deny also blocks
        ; SecurityServer / configd and HTTPS fails at the TLS handshake.
        (allow system-socket
          (require-all
            (socket-domain AF_SYSTEM)
            (socket-protocol 2)
          )
        )
        (allow mach-lookup
          (global-name "com.apple.bsd.dirhelper")
          (global-name "com.apple.system.opendirectoryd.membership")
          (global-name "com.apple.SecurityServer")
          (global-name "com.apple.networkd")
          (global-name "com.apple.ocspd")
          (global-name "com.apple.trustd.agent")
          (global-name "com.apple.SystemConfiguration.DNSConfiguration")
          (global-name "com.apple.SystemConfiguration.configd")
        )
        (allow sysctl-read
          (sysctl-name-regex #"^net.routetable")
        )
        (deny network*)
        (allow network-outbound (remote ip "localhost:%d"))
        """
        .formatted(port);
  }

  // ---- golden text, every mode ----

  @Test
  void defaultModeAllowsWritesBeneathEachPathAndAddsNoNetworkRule() {
    String profile =
        SeatbeltProfile.of(List.of("/workspace", "/tmp/quote\"name"), NetMode.DEFAULT, 0);

    assertThat(profile)
        .isEqualTo(
            HEAD
                + "(allow file-write* (subpath \"/workspace\"))\n"
                + "(allow file-write* (subpath \"/tmp/quote\\\"name\"))\n"
                + DEV_NULL);
    assertThat(profile).doesNotContain("network");
  }

  @Test
  void noWritablePathLeavesOnlyTheNullDevice() {
    assertThat(SeatbeltProfile.of(List.of(), NetMode.DEFAULT, 0)).isEqualTo(HEAD + DEV_NULL);
  }

  @Test
  void emptyPathsAreSkippedAsTheSeedSkipsThem() {
    assertThat(SeatbeltProfile.of(List.of("", "/w", ""), NetMode.DEFAULT, 0))
        .isEqualTo(HEAD + "(allow file-write* (subpath \"/w\"))\n" + DEV_NULL);
  }

  @Test
  void pathsKeepTheirOrderAndDuplicatesAreTheCallersBusiness() {
    assertThat(SeatbeltProfile.of(List.of("/b", "/a", "/b"), NetMode.DEFAULT, 0))
        .isEqualTo(
            HEAD
                + "(allow file-write* (subpath \"/b\"))\n"
                + "(allow file-write* (subpath \"/a\"))\n"
                + "(allow file-write* (subpath \"/b\"))\n"
                + DEV_NULL);
  }

  @Test
  void denyAllDeniesTheWholeNetwork() {
    assertThat(SeatbeltProfile.of(List.of("/w"), NetMode.DENY_ALL, 0))
        .isEqualTo(
            HEAD + "(allow file-write* (subpath \"/w\"))\n" + DEV_NULL + "(deny network*)\n");
  }

  @Test
  void allowListOpensOnlyThePlatformSocketsAndTheProxyPort() {
    assertThat(SeatbeltProfile.of(List.of("/w"), NetMode.ALLOW_LIST, 43123))
        .isEqualTo(HEAD + "(allow file-write* (subpath \"/w\"))\n" + DEV_NULL + restricted(43123));
  }

  @Test
  void proxyModeHasTheSameLoopbackHole() {
    assertThat(SeatbeltProfile.of(List.of(), NetMode.PROXY, 43124))
        .isEqualTo(HEAD + DEV_NULL + restricted(43124));
  }

  @Test
  void theRestrictedSectionEndsWithTheDenyThenTheOneHole() {
    String profile = SeatbeltProfile.of(List.of(), NetMode.ALLOW_LIST, 1);
    assertThat(profile)
        .endsWith("(deny network*)\n(allow network-outbound (remote ip \"localhost:1\"))\n");
    assertThat(profile.lines().filter(l -> l.startsWith("(allow network"))).hasSize(1);
    assertThat(SeatbeltProfile.PLATFORM_SERVICES).hasSize(8).doesNotHaveDuplicates();
  }

  @ParameterizedTest
  @EnumSource(
      value = NetMode.class,
      names = {"DEFAULT", "DENY_ALL"})
  void modesWithoutAProxyIgnoreThePort(NetMode mode) {
    assertThat(SeatbeltProfile.of(List.of(), mode, -5))
        .isEqualTo(SeatbeltProfile.of(List.of(), mode, 8080));
  }

  @ParameterizedTest
  @EnumSource(NetMode.class)
  void everyModeHasAProfile(NetMode mode) {
    // The seed's "unknown mode" (NOT_AVAILABLE) branch has no Java twin: a NetMode is one of four.
    assertThat(SeatbeltProfile.of(List.of("/w"), mode, 65535)).startsWith(HEAD).contains(DEV_NULL);
  }

  // ---- errors ----

  @ParameterizedTest
  @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
  void proxiedModesWithoutAPortAreAnInternalError(int port) {
    for (NetMode mode : List.of(NetMode.ALLOW_LIST, NetMode.PROXY)) {
      assertThatThrownBy(() -> SeatbeltProfile.of(List.of(), mode, port))
          .isInstanceOfSatisfying(
              SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.INTERNAL))
          .hasMessage(
              "sandbox: seatbelt: net mode "
                  + mode.code()
                  + " requires a positive proxy port, got "
                  + port);
    }
  }

  @Test
  void aPortBeyondTcpIsAnInternalErrorToo() {
    assertThatThrownBy(() -> SeatbeltProfile.of(List.of(), NetMode.PROXY, 65536))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.INTERNAL))
        .hasMessage("sandbox: seatbelt: net mode 3 proxy port 65536 out of range");
  }

  @Test
  void nullsAreRefused() {
    assertThatNullPointerException().isThrownBy(() -> SeatbeltProfile.of(List.of(), null, 0));
    assertThatNullPointerException().isThrownBy(() -> SeatbeltProfile.of(null, NetMode.DEFAULT, 0));
    assertThatNullPointerException()
        .isThrownBy(() -> SeatbeltProfile.of(Arrays.asList("/a", null), NetMode.DEFAULT, 0));
  }

  @Test
  void aPathWithoutAByteFormIsRefusedRatherThanWrittenAsAnotherPath() {
    assertThatThrownBy(() -> SeatbeltProfile.of(List.of("/a\uD800b"), NetMode.DEFAULT, 0))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION))
        .hasMessageContaining("unpaired surrogate (U+D800)");
  }

  // ---- Go's strconv.Quote ----

  static Stream<Arguments> goQuotes() {
    return Stream.of(
        Arguments.of("", "\"\""),
        Arguments.of("/Users/me/work dir", "\"/Users/me/work dir\""),
        // always backslashed
        Arguments.of("a\"b", "\"a\\\"b\""),
        Arguments.of("a\\b", "\"a\\\\b\""),
        Arguments.of("'", "\"'\""),
        // the C escapes
        Arguments.of("\u0007\b\f\n\r\t\u000b", "\"\\a\\b\\f\\n\\r\\t\\v\""),
        // other C0 controls and DEL as \xNN, lower-case hex
        Arguments.of("\u0000", "\"\\x00\""),
        Arguments.of("\u001b[0m", "\"\\x1b[0m\""),
        Arguments.of("\u001f", "\"\\x1f\""),
        Arguments.of("\u007f", "\"\\x7f\""),
        // printable non-ASCII kept: letters, marks, numbers, punctuation, symbols
        Arguments.of("café", "\"café\""),
        Arguments.of("e\u0301", "\"e\u0301\""),
        Arguments.of("日本語", "\"日本語\""),
        Arguments.of("Ⅻ½", "\"Ⅻ½\""),
        Arguments.of("«€»", "\"«€»\""),
        Arguments.of("\uFFFD", "\"\uFFFD\""),
        Arguments.of("😀", "\"😀\""),
        // non-printable runes as \\u (lower-case hex), above U+FFFF as \\U
        Arguments.of("\u0080", "\"\\u0080\""),
        Arguments.of("\u009f", "\"\\u009f\""),
        Arguments.of("a\u00A0b", "\"a\\u00a0b\""),
        Arguments.of("\u00AD", "\"\\u00ad\""),
        Arguments.of("\u200B", "\"\\u200b\""),
        Arguments.of("\u2028", "\"\\u2028\""),
        Arguments.of("\u3000", "\"\\u3000\""),
        Arguments.of("\uFEFF", "\"\\ufeff\""),
        Arguments.of("\uE000", "\"\\ue000\""),
        Arguments.of("\u0378", "\"\\u0378\""),
        Arguments.of("\uDB40\uDC01", "\"\\U000e0001\""),
        Arguments.of("\uDB80\uDC00", "\"\\U000f0000\""));
  }

  @ParameterizedTest
  @MethodSource("goQuotes")
  void quotesAsGoStrconvQuoteDoes(String s, String quoted) {
    assertThat(SeatbeltProfile.quote(s)).isEqualTo(quoted);
  }

  static Stream<Arguments> goQuotesOfBytes() {
    return Stream.of(
        // a byte that is not UTF-8 at all
        Arguments.of(bytes(0xff), "\"\\xff\""),
        // a truncated sequence, then ASCII
        Arguments.of(bytes('a', 0xc3, 'b'), "\"a\\xc3b\""),
        // an overlong NUL: each byte on its own
        Arguments.of(bytes(0xc0, 0x80), "\"\\xc0\\x80\""),
        // an encoded surrogate (U+D800)
        Arguments.of(bytes(0xed, 0xa0, 0x80), "\"\\xed\\xa0\\x80\""),
        // past U+10FFFF
        Arguments.of(bytes(0xf4, 0x90, 0x80, 0x80), "\"\\xf4\\x90\\x80\\x80\""),
        // a lone continuation byte between text
        Arguments.of(bytes('/', 0x80, 0xc3, 0xa9), "\"/\\x80é\""),
        // the UTF-8 of U+FFFD is text, not an error
        Arguments.of(bytes(0xef, 0xbf, 0xbd), "\"\uFFFD\""));
  }

  @ParameterizedTest
  @MethodSource("goQuotesOfBytes")
  void quotesTheBytesAStringStandsForAsGoQuotesThem(byte[] raw, String quoted) {
    assertThat(SeatbeltProfile.quote(ByteStrings.decode(raw))).isEqualTo(quoted);
  }

  @Test
  void escapesThatSpellUtf8AreThatText() {
    // Two escapes whose bytes are the UTF-8 of é: Go sees the bytes, and so é.
    assertThat(SeatbeltProfile.quote("\uDCC3\uDCA9")).isEqualTo("\"é\"");
    // A pair whose low half is in the escape range is a character, not an escape.
    assertThat(SeatbeltProfile.quote("\uD83D\uDCA9")).isEqualTo("\"\uD83D\uDCA9\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"\uD800", "a\uDBFF", "\uDC00", "\uDC7F", "\uDD00", "\uDFFF"})
  void unpairedSurrogatesThatStandForNoByteAreRefused(String s) {
    assertThatThrownBy(() -> SeatbeltProfile.quote(s))
        .isInstanceOfSatisfying(
            SandboxException.class, e -> assertThat(e.kind()).isEqualTo(Kind.VALIDATION))
        .hasMessageContaining("stands for no byte");
  }

  private static byte[] bytes(int... values) {
    byte[] out = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = (byte) values[i];
    }
    return out;
  }
}
