package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class GlobPatternTest {
  private static boolean matches(String pattern, String name) {
    return new GlobPattern(pattern).matches(name);
  }

  @ParameterizedTest(name = "{0} matches {1}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '\'',
      emptyValue = "",
      textBlock =
          """
          rm              | rm
          mkfs*           | mkfs.ext4
          mkfs*           | mkfs
          ?               | a
          ?               | ?
          r?              | rm
          [abc]           | b
          [a-c]           | a
          [a-c]           | c
          [a-cx-z]        | y
          [^a-c]          | d
          [^a-c]          | A
          \\*             | *
          \\?             | ?
          \\a             | a
          [\\]]           | ]
          [\\-]           | -
          [\\^]           | ^
          [*?]            | ?
          *               | ''
          *               | rm
          **              | rm
          *.sh            | deploy.sh
          *a*b            | aXaYb
          a*b*c           | abc
          a*b*c           | aXbYbZc
          *a*a*a*a*a*a*b  | aaaaaab
          ''              | ''
          """)
  void matchesExamples(String pattern, String name) {
    assertThat(matches(pattern, name)).isTrue();
  }

  @ParameterizedTest(name = "{0} does not match {1}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '\'',
      emptyValue = "",
      textBlock =
          """
          rm              | rmdir
          rm              | ''
          r               | rm
          rm              | r
          mkfs*           | mkf
          mkfs*           | xmkfs
          ?               | ''
          ?               | ab
          [abc]           | d
          [abc]           | ab
          [a-c]           | d
          [a-c]           | B
          [^a-c]          | b
          [^a-c]          | ''
          \\*             | a
          \\*             | \\*
          [\\]]           | \\
          ''              | a
          a*b*c           | abcd
          *.sh            | deploy.shx
          *a*a*a*a*a*a*b  | aaaaab
          """)
  void doesNotMatchExamples(String pattern, String name) {
    assertThat(matches(pattern, name)).isFalse();
  }

  @ParameterizedTest(name = "{0} does not match {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          *    | a/b
          *    | /
          a*   | a/
          *b   | a/b
          a*b  | a/b
          ?    | /
          a?b  | a/b
          """)
  void wildcardsNeverMatchSlash(String pattern, String name) {
    assertThat(matches(pattern, name)).isFalse();
  }

  @ParameterizedTest(name = "{0} matches {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          [/]   | /
          [^a]  | /
          [!-0] | /
          """)
  void classesMayMatchSlashAsInGo(String pattern, String name) {
    assertThat(matches(pattern, name)).isTrue();
  }

  @Test
  void reversedRangesAreValidAndMatchNothingAsInGo() {
    assertThat(matches("[z-a]", "m")).isFalse();
    assertThat(matches("[z-a]", "z")).isFalse();
    assertThat(matches("[^z-a]", "m")).isTrue();
    assertThat(matches("x[z-a]", "x")).isFalse();
  }

  @Test
  void charactersAreCodePoints() {
    assertThat(matches("?", "\uD83D\uDE00")).isTrue();
    assertThat(matches("[\uD83D\uDE00]", "\uD83D\uDE00")).isTrue();
    assertThat(matches("a?c", "a\u00e9c")).isTrue();
  }

  @Test
  void literalSlashMatchesSlash() {
    assertThat(matches("a/b", "a/b")).isTrue();
    assertThat(matches("*/*", "a/b")).isTrue();
    assertThat(matches("a\\/b", "a/b")).isTrue();
    assertThat(matches("*/*", "a/b/c")).isFalse();
  }

  @ParameterizedTest(name = "malformed {0}")
  @ValueSource(
      strings = {
        "[", "[a", "[]", "[-a]", "[a-]", "\\", "[^]", "[^", "a[", "*[", "[a-b-c]", "[a--]", "[\\",
        "[a-\\", "rm\\", "[]a]", "x[^]", "[^]]", "*\\"
      })
  void malformedPatternsNeverMatch(String pattern) {
    GlobPattern glob = new GlobPattern(pattern);
    assertThat(glob.matches(pattern)).isFalse();
    assertThat(glob.matches("")).isFalse();
    assertThat(glob.matches("a")).isFalse();
    assertThat(glob.matches("z")).isFalse();
    assertThat(glob.matches("[")).isFalse();
    assertThat(glob.matches("rm")).isFalse();
    assertThat(glob.matches("]")).isFalse();
    assertThat(glob.matches("-")).isFalse();
  }

  @Test
  void malformedTailIsDetectedEvenWhenThePrefixAlreadyFails() {
    // The literal prefix "a" would match; the malformed rest still makes the whole pattern fail.
    assertThat(matches("a[", "a")).isFalse();
    assertThat(matches("a[", "a[")).isFalse();
    assertThat(matches("a\\", "a\\")).isFalse();
  }

  @Test
  void nullPatternNeverMatches() {
    GlobPattern glob = new GlobPattern(null);
    assertThat(glob.matches("")).isFalse();
    assertThat(glob.matches("null")).isFalse();
    assertThat(glob.toString()).isNull();
  }

  @Test
  void toStringIsThePatternText() {
    assertThat(new GlobPattern("mkfs*").toString()).isEqualTo("mkfs*");
    assertThat(new GlobPattern("[").toString()).isEqualTo("[");
  }

  @Test
  void emptyPatternMatchesOnlyTheEmptyName() {
    GlobPattern glob = new GlobPattern("");
    assertThat(glob.matches("")).isTrue();
    assertThat(glob.matches(" ")).isFalse();
    assertThat(glob.matches("a")).isFalse();
  }

  @Test
  @Timeout(value = 5, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void manyStarsDoNotBacktrackExponentially() {
    String as = "a".repeat(5_000);
    assertThat(matches("*a*a*a*a*a*a*b", as)).isFalse();
    assertThat(matches("*a*a*a*a*a*a*b", as + "b")).isTrue();
    assertThat(matches("*a*a*a*a*a*a*", as + "/")).isFalse();
  }
}
