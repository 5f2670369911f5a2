package dev.confine.build;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps every test countable. Surefire runs only classes named like tests ({@code *Test}, {@code
 * *Tests}, {@code *TestCase}, {@code Test*}): a class of properties named otherwise never ran. And
 * it writes one report per class and engine, so a class holding both JUnit Jupiter tests and jqwik
 * properties had one report overwrite the other, and the CI's totals (read from the reports) missed
 * the overwritten tests.
 */
class TestSourcesTest {
  private static final Path SOURCES = Path.of("src/test/java");
  private static final Pattern JUPITER =
      Pattern.compile("@(?:[\\w.]+\\.)?(Test|ParameterizedTest|RepeatedTest|TestFactory)\\b");
  private static final Pattern JQWIK = Pattern.compile("@(?:[\\w.]+\\.)?(Property|Example)\\b");
  private static final Pattern ABSTRACT = Pattern.compile("(?m)^abstract class \\w+");
  private static final Pattern RUN_BY_SUREFIRE =
      Pattern.compile("Test.*|.*Test|.*Tests|.*TestCase");

  private static List<Path> sources() throws IOException {
    try (Stream<Path> files = Files.walk(SOURCES)) {
      return files.filter(p -> p.toString().endsWith(".java")).toList();
    }
  }

  @Test
  void everyClassWithTestsIsNamedSoThatSurefireRunsIt() throws IOException {
    List<Path> sources = sources();
    assertThat(sources).isNotEmpty();
    List<String> unrun =
        sources.stream()
            .filter(p -> contains(p, JUPITER) || contains(p, JQWIK))
            .filter(p -> !contains(p, ABSTRACT)) // its tests run in its subclasses
            .map(p -> p.getFileName().toString().replace(".java", ""))
            .filter(name -> !RUN_BY_SUREFIRE.matcher(name).matches())
            .toList();
    assertThat(unrun).isEmpty();
  }

  @Test
  void noClassMixesJupiterTestsAndJqwikProperties() throws IOException {
    List<Path> mixed =
        sources().stream().filter(p -> contains(p, JUPITER) && contains(p, JQWIK)).toList();
    assertThat(mixed).isEmpty();
  }

  private static boolean contains(Path file, Pattern pattern) {
    try {
      return pattern.matcher(Files.readString(file)).find();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + file, e);
    }
  }
}
