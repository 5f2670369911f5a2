package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link GlobPattern} by property. Its own class, apart from {@link GlobPatternTest}: Surefire
 * writes one report per class and engine, and a class run by both JUnit Jupiter and jqwik had one
 * report overwrite the other.
 */
class GlobPatternPropertiesTest {
  private static boolean matches(String pattern, String name) {
    return new GlobPattern(pattern).matches(name);
  }

  @Provide
  Arbitrary<String> plainStrings() {
    return Arbitraries.strings()
        .ofMaxLength(30)
        .filter(s -> s.chars().noneMatch(c -> c == '*' || c == '?' || c == '[' || c == '\\'));
  }

  @Provide
  Arbitrary<String> slashFree() {
    return Arbitraries.strings().ofMaxLength(30).filter(s -> s.indexOf('/') < 0);
  }

  @Provide
  Arbitrary<String> withSlash() {
    return Arbitraries.strings()
        .ofMaxLength(30)
        .flatMap(
            s ->
                Arbitraries.integers()
                    .between(0, s.length())
                    .map(i -> s.substring(0, i) + "/" + s.substring(i)));
  }

  @Property
  void plainTextMatchesExactlyItself(@ForAll("plainStrings") String s) {
    GlobPattern glob = new GlobPattern(s);
    assertThat(glob.matches(s)).isTrue();
    assertThat(glob.matches(s + "x")).isFalse();
    assertThat(glob.matches("x" + s)).isFalse();
    if (!s.isEmpty()) {
      assertThat(glob.matches(s.substring(1))).isFalse();
    }
  }

  @Property
  void fullyEscapedPatternMatchesTheOriginal(@ForAll("slashFree") String s) {
    StringBuilder escaped = new StringBuilder();
    for (char c : s.toCharArray()) {
      escaped.append('\\').append(c);
    }
    GlobPattern glob = new GlobPattern(escaped.toString());
    assertThat(glob.matches(s)).isTrue();
    assertThat(glob.matches(s + "x")).isFalse();
  }

  @Property
  void starMatchesEveryNameWithoutSlash(@ForAll("slashFree") String s) {
    assertThat(matches("*", s)).isTrue();
  }

  @Property
  void starMatchesNoNameWithSlash(@ForAll("withSlash") String s) {
    assertThat(s).contains("/");
    assertThat(matches("*", s)).isFalse();
  }

  @Property
  void prefixStarMatchesPrefixPlusAnything(
      @ForAll("plainStrings") String prefix, @ForAll("slashFree") String rest) {
    assertThat(matches(prefix + "*", prefix + rest)).isTrue();
    assertThat(matches(prefix + "*", prefix + rest + "/")).isFalse();
  }
}
