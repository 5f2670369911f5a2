package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.SandboxException.Kind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class EnvPolicyTest {

  private static final List<String> HOST =
      List.of("PATH=/usr/bin", "HOME=/home/u", "Lang=x", "LANG=C.UTF-8", "EMPTY=", "A==b");

  private static Map<String, String> ordered(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  // ---- factories ----

  @Test
  void inheritAllHasNullAllowAndNoInject() {
    EnvPolicy p = EnvPolicy.inheritAll();

    assertThat(p.allow()).isNull();
    assertThat(p.inject()).isEmpty();
    assertThat(p.inheritsAll()).isTrue();
  }

  @Test
  void noneHasEmptyNonNullAllow() {
    EnvPolicy p = EnvPolicy.none();

    assertThat(p.allow()).isNotNull().isEmpty();
    assertThat(p.inject()).isEmpty();
    assertThat(p.inheritsAll()).isFalse();
  }

  @Test
  void allowFactoriesKeepTheNamesInOrder() {
    assertThat(EnvPolicy.allow("PATH", "HOME").allow()).containsExactly("PATH", "HOME");
    assertThat(EnvPolicy.allow(List.of("B", "A")).allow()).containsExactly("B", "A");
    assertThat(EnvPolicy.allow(new String[0]).allow()).isNotNull().isEmpty();
    assertThat(EnvPolicy.allow("X").inheritsAll()).isFalse();
  }

  @Test
  void withInjectKeepsAllowAndReplacesInject() {
    EnvPolicy p = EnvPolicy.allow("PATH").withInject(ordered("A", "1"));
    EnvPolicy q = p.withInject(ordered("B", "2"));

    assertThat(p.allow()).containsExactly("PATH");
    assertThat(p.inject()).containsExactly(Map.entry("A", "1"));
    assertThat(q.allow()).containsExactly("PATH");
    assertThat(q.inject()).containsExactly(Map.entry("B", "2"));
    assertThat(EnvPolicy.inheritAll().withInject(ordered("A", "1")).allow()).isNull();
  }

  @Test
  void nullInjectBecomesEmpty() {
    assertThat(new EnvPolicy(null, null).inject()).isNotNull().isEmpty();
    assertThat(EnvPolicy.none().withInject(null).inject()).isEmpty();
  }

  // ---- validation ----

  @Test
  void nullAllowEntryIsRejectedWithItsIndex() {
    assertThatThrownBy(() -> EnvPolicy.allow("A", null))
        .isInstanceOf(SandboxException.class)
        .hasMessage("sandbox: env allow entry 1 is null")
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION));
    assertThatThrownBy(() -> EnvPolicy.allow(Arrays.asList(null, "B")))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("entry 0 is null");
  }

  static Stream<Arguments> badInjections() {
    return Stream.of(
        Arguments.of("empty name", "", "v", "injected env name \"\" is invalid"),
        Arguments.of("name with =", "A=B", "v", "injected env name \"A=B\" is invalid"),
        Arguments.of("name with NUL", "A\0B", "v", "injected env name \"A\\x00B\" is invalid"),
        Arguments.of("null name", null, "v", "injected env name null is invalid"),
        Arguments.of("null value", "A", null, "injected env value for \"A\" is null"),
        Arguments.of("value with NUL", "A", "x\0y", "injected env value for \"A\" contains NUL"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badInjections")
  void badInjectionIsValidationNamingTheProblem(
      String what, String name, String value, String message) {
    Map<String, String> inject = new HashMap<>();
    inject.put(name, value);

    assertThatThrownBy(() -> EnvPolicy.none().withInject(inject))
        .isInstanceOf(SandboxException.class)
        .hasMessageStartingWith("sandbox: ")
        .hasMessageContaining(message)
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION));
  }

  /** Names a shell or {@code env} cannot take apart, or that smuggle a second entry in. */
  static Stream<String> badNames() {
    return Stream.of(
        "X\nY", "1A", "A-B", "A.B", " A", "A ", "A B", "A\tB", "\u00c9T\u00c9", "A%%", "A=B", "");
  }

  @ParameterizedTest
  @MethodSource("badNames")
  void anInjectedNameThatIsNotAPortableVariableNameIsValidation(String name) {
    Map<String, String> inject = Map.of(name, "1");

    assertThatThrownBy(() -> EnvPolicy.none().withInject(inject))
        .isInstanceOf(SandboxException.class)
        .hasMessageStartingWith("sandbox: injected env name " + Quote.of(name) + " is invalid")
        .hasMessageContaining("[A-Za-z_][A-Za-z0-9_]*")
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION));
  }

  @ParameterizedTest
  @MethodSource("badNames")
  void isValidNameRefusesThem(String name) {
    assertThat(EnvPolicy.isValidName(name)).isFalse();
  }

  @ParameterizedTest
  @MethodSource("badNames")
  void anAllowListNameThatIsNotAPortableVariableNameIsValidation(String name) {
    assertThatThrownBy(() -> EnvPolicy.allow("PATH", name))
        .isInstanceOf(SandboxException.class)
        .hasMessageStartingWith("sandbox: env allow entry 1 " + Quote.of(name) + " is invalid")
        .hasMessageContaining("[A-Za-z_][A-Za-z0-9_]*")
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION));
  }

  @ParameterizedTest
  @ValueSource(strings = {"A", "_", "a", "_9", "Path", "A_1_b"})
  void portableNamesAreAccepted(String name) {
    assertThat(EnvPolicy.isValidName(name)).isTrue();
    assertThat(EnvPolicy.allow(name).withInject(Map.of(name, "v")).apply(List.of()))
        .containsExactly(name + "=v");
  }

  @Test
  void emptyValueAndValueWithEqualsAreAccepted() {
    EnvPolicy p = EnvPolicy.none().withInject(ordered("E", "", "Q", "a=b"));

    assertThat(p.apply(List.of())).containsExactly("E=", "Q=a=b");
  }

  // ---- immutability ----

  @Test
  void mutatingTheSourceAllowListHasNoEffect() {
    List<String> names = new ArrayList<>(List.of("PATH"));
    EnvPolicy p = EnvPolicy.allow(names);
    EnvPolicy q = new EnvPolicy(names, null);
    names.add("HOME");

    assertThat(p.allow()).containsExactly("PATH");
    assertThat(q.allow()).containsExactly("PATH");
  }

  @Test
  void mutatingTheSourceArrayHasNoEffect() {
    String[] names = {"PATH"};
    EnvPolicy p = EnvPolicy.allow(names);
    names[0] = "HOME";

    assertThat(p.allow()).containsExactly("PATH");
  }

  @Test
  void mutatingTheSourceInjectMapHasNoEffect() {
    Map<String, String> inject = ordered("A", "1");
    EnvPolicy p = EnvPolicy.none().withInject(inject);
    inject.put("B", "2");
    inject.put("A", "changed");

    assertThat(p.inject()).containsExactly(Map.entry("A", "1"));
  }

  @Test
  void returnedCollectionsAreUnmodifiable() {
    EnvPolicy p = EnvPolicy.allow("PATH").withInject(ordered("A", "1"));

    assertThatThrownBy(() -> p.allow().add("X")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> p.inject().put("X", "y"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> p.inject().remove("A"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(p.allow()).containsExactly("PATH");
    assertThat(p.inject()).containsOnlyKeys("A");
  }

  @Test
  void equalPoliciesAreEqual() {
    assertThat(EnvPolicy.allow("A").withInject(ordered("X", "1")))
        .isEqualTo(new EnvPolicy(List.of("A"), Map.of("X", "1")))
        .hasSameHashCodeAs(new EnvPolicy(List.of("A"), Map.of("X", "1")));
    assertThat(EnvPolicy.none()).isNotEqualTo(EnvPolicy.inheritAll());
  }

  // ---- apply ----

  @Test
  void nullAllowInheritsEverythingInHostOrder() {
    assertThat(EnvPolicy.inheritAll().apply(HOST)).containsExactlyElementsOf(HOST);
  }

  @Test
  void nullAllowKeepsEvenOddHostEntries() {
    List<String> host = List.of("NOEQUALS", "=x", "A=1");

    assertThat(EnvPolicy.inheritAll().apply(host)).containsExactly("NOEQUALS", "=x", "A=1");
  }

  @Test
  void nullAllowWithInjectReplacesAndAppends() {
    EnvPolicy p = EnvPolicy.inheritAll().withInject(ordered("HOME", "/tmp", "NEW", "1"));

    assertThat(p.apply(HOST))
        .containsExactly(
            "PATH=/usr/bin", "Lang=x", "LANG=C.UTF-8", "EMPTY=", "A==b", "HOME=/tmp", "NEW=1");
  }

  @Test
  void emptyAllowAndEmptyInjectGiveAnExplicitlyEmptyEnvironment() {
    List<String> env = EnvPolicy.none().apply(HOST);

    assertThat(env).isNotNull().isEmpty();
  }

  @Test
  void emptyAllowShowsOnlyInjected() {
    EnvPolicy p = EnvPolicy.none().withInject(ordered("PATH", "/bin", "Z", "z"));

    assertThat(p.apply(HOST)).containsExactly("PATH=/bin", "Z=z");
  }

  @Test
  void allowListFiltersExactlyAndCaseSensitively() {
    EnvPolicy p = EnvPolicy.allow("LANG", "HOME", "MISSING", "path");

    assertThat(p.apply(HOST)).containsExactly("HOME=/home/u", "LANG=C.UTF-8");
  }

  @Test
  void allowListKeepsHostOrderNotAllowOrder() {
    EnvPolicy p = EnvPolicy.allow("LANG", "PATH");

    assertThat(p.apply(HOST)).containsExactly("PATH=/usr/bin", "LANG=C.UTF-8");
  }

  @Test
  void allowListMatchesTheNameBeforeTheFirstEquals() {
    assertThat(EnvPolicy.allow("A", "EMPTY").apply(HOST)).containsExactly("EMPTY=", "A==b");
  }

  @Test
  void allowListSkipsEntriesWithoutEqualsOrWithoutName() {
    List<String> host = List.of("NOEQUALS", "=x", "=", "OK=1");

    assertThat(EnvPolicy.allow("NOEQUALS", "OK").apply(host)).containsExactly("OK=1");
  }

  @Test
  void injectedNamesReplaceHostValuesAndComeAfterForwardedEntries() {
    EnvPolicy p =
        EnvPolicy.allow("PATH", "HOME", "LANG")
            .withInject(ordered("LANG", "en_US", "NEW", "n", "HOME", "/x"));

    assertThat(p.apply(HOST)).containsExactly("PATH=/usr/bin", "LANG=en_US", "NEW=n", "HOME=/x");
  }

  @Test
  void injectedNameReplacesHostValueEvenWhenNotAllowed() {
    EnvPolicy p = EnvPolicy.allow("PATH").withInject(ordered("HOME", "/inj"));

    assertThat(p.apply(HOST)).containsExactly("PATH=/usr/bin", "HOME=/inj");
  }

  @Test
  void injectOrderFollowsTheMapIterationOrder() {
    Map<String, String> inject = ordered("Z", "1", "A", "2", "M", "3");
    Map<String, String> reversed = ordered("M", "3", "A", "2", "Z", "1");

    assertThat(EnvPolicy.none().withInject(inject).apply(List.of()))
        .containsExactly("Z=1", "A=2", "M=3");
    assertThat(EnvPolicy.none().withInject(reversed).apply(List.of()))
        .containsExactly("M=3", "A=2", "Z=1");
  }

  @Test
  void applyDoesNotChangeTheHostList() {
    List<String> host = new ArrayList<>(HOST);
    EnvPolicy.allow("PATH").withInject(ordered("X", "1")).apply(host);

    assertThat(host).containsExactlyElementsOf(HOST);
  }
}
