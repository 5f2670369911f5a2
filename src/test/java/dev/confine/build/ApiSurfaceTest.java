package dev.confine.build;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.Runner;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Holds the compiled API to the checked-in {@code api/confine.api}, so that a change to what the
 * exported packages offer shows in review as a change to that file: when this fails, run {@code
 * scripts/api-dump} and commit the new file with the change.
 */
class ApiSurfaceTest {
  static final Path CHECKED_IN = Path.of("api/confine.api");

  /** The library's compiled classes (target/classes), its module-info.class included. */
  static Path mainClasses() {
    try {
      return Path.of(Runner.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void compiledApiIsTheCheckedInOne() throws IOException {
    String compiled = ApiSurface.render(mainClasses(), Runner.class.getClassLoader());
    assertThat(CHECKED_IN).as("the checked-in API surface").isRegularFile();
    String checkedIn = Files.readString(CHECKED_IN, StandardCharsets.UTF_8);
    List<String> diff = ApiSurface.diff(checkedIn, compiled);
    if (!diff.isEmpty()) {
      throw new AssertionError(
          "The compiled API differs from "
              + CHECKED_IN
              + " (- only in the file, + only in the classes). If the change is meant, run"
              + " scripts/api-dump and commit "
              + CHECKED_IN
              + " with it.\n"
              + String.join("\n", diff));
    }
  }

  @Test
  void surfaceCoversEveryExportedPackageAndNoOther() throws IOException {
    String compiled = ApiSurface.render(mainClasses(), Runner.class.getClassLoader());
    var exported = ApiSurface.exportedPackages(ApiSurface.descriptor(mainClasses()));
    List<String> packages =
        compiled
            .lines()
            .filter(l -> !l.isEmpty() && !l.startsWith(" ") && !l.equals("}"))
            .map(l -> l.replaceFirst(".* (?:class|interface|enum|record|@interface) ", ""))
            .map(l -> l.replaceFirst("[ <(].*", ""))
            .map(n -> n.substring(0, n.lastIndexOf('.')))
            .distinct()
            .toList();
    assertThat(packages).containsExactlyInAnyOrderElementsOf(exported);
  }

  /**
   * The rules of the format, on a module compiled here: implied modifiers left out, sealed and
   * non-sealed, generic bounds, wildcards and varargs, enum constants in ordinal order, bridges
   * left out, and the members of a package-private supertype listed where clients reach them.
   */
  @Test
  void fixtureModuleRendersByTheFormatsRules(@TempDir Path dir) throws IOException {
    Path src = dir.resolve("src");
    Path out = dir.resolve("classes");
    Map<String, String> sources =
        Map.of(
            "module-info.java",
            "module fixture { exports p; }",
            "p/Base.java",
            """
            package p;
            abstract class Base<T> implements Hidden {
              public abstract T value();
              protected void hook() {}
              public static void util() {}
              void packagePrivate() {}
            }
            """,
            "p/Hidden.java",
            """
            package p;
            interface Hidden extends AutoCloseable {
              default void extra() {}
              static void notInherited() {}
            }
            """,
            "p/Impl.java",
            """
            package p;
            public final class Impl extends Base<String> implements Comparable<Impl> {
              public static final int LIMIT = 3;
              public Impl(String... names) {}
              @Override public String value() { return ""; }
              @Override public int compareTo(Impl o) { return 0; }
              @Override public void close() {}
              @Deprecated public void old() {}
              private void secret() {}
            }
            """,
            "p/Shape.java",
            """
            package p;
            public sealed interface Shape permits Circle, Square {
              public final class Nested {}
            }
            """,
            "p/Circle.java",
            "package p; public record Circle(double radius) implements Shape {}",
            "p/Square.java",
            """
            package p;
            public non-sealed class Square implements Shape {
              protected Square() {}
              public <T extends Number & Comparable<T>> T max(java.util.List<? extends T> xs, T... more)
                  throws java.io.IOException {
                return null;
              }
            }
            """,
            "p/Color.java",
            "package p; public enum Color { RED, GREEN { public String toString() { return \"g\"; } }, BLUE }",
            "q/Internal.java",
            "package q; public class Internal {}");
    for (var e : sources.entrySet()) {
      Path file = src.resolve(e.getKey());
      Files.createDirectories(file.getParent());
      Files.writeString(file, e.getValue());
    }
    List<String> args = new ArrayList<>(List.of("-d", out.toString()));
    try (Stream<Path> files = Files.walk(src)) {
      files.filter(f -> f.toString().endsWith(".java")).forEach(f -> args.add(f.toString()));
    }
    assertThat(
            ToolProvider.getSystemJavaCompiler().run(null, null, null, args.toArray(new String[0])))
        .isZero();
    String surface;
    try (URLClassLoader loader =
        new URLClassLoader(new URL[] {out.toUri().toURL()}, ClassLoader.getPlatformClassLoader())) {
      surface = ApiSurface.render(out, loader);
    }
    assertThat(surface)
        .isEqualTo(
            """
            public record p.Circle(double radius) implements p.Shape {
              public Circle(double)
              public final boolean equals(java.lang.Object)
              public final int hashCode()
              public double radius()
              public final java.lang.String toString()
            }

            public enum p.Color {
              constant RED
              constant GREEN
              constant BLUE
              public static p.Color valueOf(java.lang.String)
              public static p.Color[] values()
            }

            public final class p.Impl implements java.lang.AutoCloseable, java.lang.Comparable<p.Impl> {
              public static final int LIMIT
              public Impl(java.lang.String...)
              public void close()
              public int compareTo(p.Impl)
              public default void extra() (from p.Hidden)
              protected void hook() (from p.Base)
              @java.lang.Deprecated public void old()
              public static void util() (from p.Base)
              public java.lang.String value()
            }

            public sealed interface p.Shape permits p.Circle, p.Square {
            }

            public static final class p.Shape$Nested {
              public Nested()
            }

            public non-sealed class p.Square implements p.Shape {
              protected Square()
              public <T extends java.lang.Number & java.lang.Comparable<T>> T max(java.util.List<? extends T>, T...) throws java.io.IOException
            }
            """);
  }

  @Test
  void diffNamesTheTypeAndTheLinesAddedAndRemoved() {
    String before =
        """
        public final class p.A {
          public void kept()
          public void gone()
        }

        public interface p.Old {
        }

        """;
    String after =
        """
        public final class p.A {
          public int added(int)
          public void kept()
        }

        public record p.New(int x) {
          public int x()
        }

        """;
    assertThat(ApiSurface.diff(before, after))
        .containsExactly(
            "p.A:",
            "  - public void gone()",
            "  + public int added(int)",
            "+ type public record p.New(int x) (1 members)",
            "- type public interface p.Old (0 members)");
    assertThat(ApiSurface.diff(before, before)).isEmpty();
  }

  @Test
  void typesRenderWithTheirGenericArgumentsAsBinaryNames() throws NoSuchMethodException {
    var type =
        java.util.Map.class.getMethod("entrySet").getGenericReturnType(); // Set<Map.Entry<K, V>>
    assertThat(ApiSurface.name(type)).isEqualTo("java.util.Set<java.util.Map$Entry<K, V>>");
    var wildcard =
        java.util.Collections.class.getMethod("unmodifiableList", List.class)
            .getGenericParameterTypes()[0];
    assertThat(ApiSurface.name(wildcard)).isEqualTo("java.util.List<? extends T>");
  }
}
