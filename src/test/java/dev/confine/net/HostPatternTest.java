package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Host patterns (seed §12.1): compilation, name and wildcard matching, IP literals and CIDR. */
class HostPatternTest {

  private static boolean nameMatches(String pattern, String host) {
    return HostPattern.compile(pattern).matchesName(HostNames.normalise(host));
  }

  private static boolean addressMatches(String pattern, String ip) {
    return HostPattern.compile(pattern).matchesAddress(HostNames.ipLiteral(ip).orElseThrow());
  }

  @ParameterizedTest
  @CsvSource({
    "example.com, example.com, true",
    "example.com, api.example.com, true",
    "example.com, a.b.example.com, true",
    "example.com, notexample.com, false",
    "example.com, example.com.evil.net, false",
    "example.com, example.org, false",
    "*.example.com, api.example.com, true",
    "*.example.com, example.com, false",
    "*.example.com, a.b.example.com, true",
    "Example.COM., example.com, true",
    "example.com, EXAMPLE.com., true",
    "münchen.example, xn--mnchen-3ya.example, true",
    "xn--mnchen-3ya.example, MÜNCHEN.EXAMPLE., true",
    "*.münchen.example, www.xn--mnchen-3ya.example, true",
  })
  void namesMatchOnLabelBoundaries(String pattern, String host, boolean matches) {
    assertThat(nameMatches(pattern, host)).isEqualTo(matches);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "  ", "*", "*.", "a*b.example", "*.*.example", "ex*.com", "*.a*"})
  void misplacedWildcardsAndEmptyPatternsAreRefused(String pattern) {
    assertThatThrownBy(() -> HostPattern.compile(pattern))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"exa mple.com", "a..b", "a/b", "host\u0000.com", "a_b@c"})
  void characterNoHostHasIsRefused(String pattern) {
    assertThatThrownBy(() -> HostPattern.compile(pattern))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void overlongLabelsAndNamesAreRefused() {
    assertThatThrownBy(() -> HostPattern.compile("a".repeat(64) + ".com"))
        .hasMessageContaining("label longer than 63");
    String name = ("a".repeat(60) + ".").repeat(5) + "com";
    assertThatThrownBy(() -> HostPattern.compile(name)).hasMessageContaining("longer than 253");
  }

  @ParameterizedTest
  @CsvSource({
    "10.1.2.3, 10.1.2.3, true",
    "10.1.2.3, 10.1.2.4, false",
    "10.0.0.0/8, 10.200.1.1, true",
    "10.0.0.0/8, 11.0.0.1, false",
    "10.9.9.9/8, 10.0.0.1, true",
    "192.168.1.0/25, 192.168.1.127, true",
    "192.168.1.0/25, 192.168.1.128, false",
    "0.0.0.0/0, 8.8.8.8, true",
    "0.0.0.0/0, ::1, false",
    "::1, ::1, true",
    "[::1], ::1, true",
    "fd00::/8, fd12:3456::1, true",
    "fd00::/8, fe80::1, false",
    "::ffff:10.0.0.1, 10.0.0.1, true",
    "10.0.0.1, ::ffff:10.0.0.1, true",
    "::ffff:10.0.0.0/104, 10.1.1.1, true",
    "2001:db8::/32, 2001:db8:ffff::1, true",
  })
  void ipLiteralsAndPrefixesMatchAddresses(String pattern, String ip, boolean matches) {
    assertThat(addressMatches(pattern, ip)).isEqualTo(matches);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "10.0.0.0/33",
        "::/129",
        "10.0.0.0/",
        "10.0.0.0/x",
        "bogus/8",
        "::ffff:10.0.0.0/8"
      })
  void malformedPrefixesAreRefused(String pattern) {
    assertThatThrownBy(() -> HostPattern.compile(pattern))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void namePatternsNeverMatchAddressesAndIpPatternsNeverMatchNames() {
    assertThat(HostPattern.compile("example.com").matchesAddress(new byte[] {1, 2, 3, 4}))
        .isFalse();
    assertThat(HostPattern.compile("10.0.0.1").matchesName("10.0.0.1")).isFalse();
    assertThat(HostPattern.compile("10.0.0.1").isIp()).isTrue();
    assertThat(HostPattern.compile("example.com").isIp()).isFalse();
    assertThatThrownBy(() -> HostPattern.compile("*.10.0.0.1"))
        .hasMessageContaining("of an IP address");
  }

  @Test
  void ipLiteralsAreParsedWithoutLookupAndZonesAreNotLiterals() {
    assertThat(HostNames.ipLiteral("localhost")).isEmpty();
    assertThat(HostNames.ipLiteral("127.1")).isEmpty();
    assertThat(HostNames.ipLiteral("fe80::1%eth0")).isEmpty();
    assertThat(HostNames.ipLiteral("[::1]")).hasValueSatisfying(a -> assertThat(a).hasSize(16));
    assertThat(HostNames.ipLiteral("::ffff:1.2.3.4")).hasValue(new byte[] {1, 2, 3, 4});
  }

  @Test
  void theRawPatternIsKeptForRuleDescriptions() {
    assertThat(HostPattern.compile(" Example.COM ").raw()).isEqualTo(" Example.COM ");
  }
}
