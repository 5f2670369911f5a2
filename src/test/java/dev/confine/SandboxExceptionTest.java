package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.SandboxException.Kind;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class SandboxExceptionTest {

  /** The seed's HTTPStatus check order (errdefs), written out independently of the main code. */
  private static final List<Kind> SEED_ORDER =
      List.of(
          Kind.NOT_FOUND,
          Kind.VALIDATION,
          Kind.UNAUTHORIZED,
          Kind.FORBIDDEN,
          Kind.CONFLICT,
          Kind.RATE_LIMIT,
          Kind.BUDGET_EXCEEDED,
          Kind.POLICY_DENIED,
          Kind.TIMEOUT,
          Kind.NOT_AVAILABLE,
          Kind.INTERNAL,
          Kind.INTERRUPTED,
          Kind.ABORTED);

  private static SandboxException of(Kind kind) {
    return new SandboxException(kind, "boom " + kind);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "NOT_FOUND, 404",
    "VALIDATION, 400",
    "UNAUTHORIZED, 401",
    "FORBIDDEN, 403",
    "CONFLICT, 409",
    "RATE_LIMIT, 429",
    "TIMEOUT, 504",
    "INTERRUPTED, 409",
    "ABORTED, 409",
    "NOT_AVAILABLE, 503",
    "INTERNAL, 500",
    "BUDGET_EXCEEDED, 429",
    "POLICY_DENIED, 403",
  })
  void eachKindMapsToItsSeedHttpStatus(Kind kind, int status) {
    SandboxException e = of(kind);

    assertThat(e.kind()).isEqualTo(kind);
    assertThat(kind.httpStatus()).isEqualTo(status);
    assertThat(SandboxException.httpStatus(e)).isEqualTo(status);
    assertThat(SandboxException.kindsOf(e)).containsExactly(kind);
    assertThat(SandboxException.isClassified(e)).isTrue();
  }

  @Test
  void thereAreExactlyThirteenKinds() {
    assertThat(Kind.values()).hasSize(13).containsExactlyInAnyOrderElementsOf(SEED_ORDER);
  }

  @Test
  void messageIsKeptVerbatimAndCauseIsExposed() {
    IllegalStateException cause = new IllegalStateException("disk on fire");
    SandboxException e = new SandboxException(Kind.INTERNAL, "sandbox: write failed", cause);

    assertThat(e).hasMessage("sandbox: write failed").hasCause(cause);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void kindIsFoundThroughAnUnclassifiedWrapper(Kind kind) {
    RuntimeException outer = new RuntimeException("outer", of(kind));

    assertThat(SandboxException.hasKind(outer, kind)).isTrue();
    assertThat(SandboxException.kindsOf(outer)).containsExactly(kind);
    assertThat(SandboxException.httpStatus(outer)).isEqualTo(kind.httpStatus());
  }

  @Test
  void kindIsFoundThroughSeveralLayersOfForeignWrappers() {
    Exception deep =
        new Exception(
            "a", new IllegalStateException("b", new RuntimeException("c", of(Kind.TIMEOUT))));

    assertThat(SandboxException.hasKind(deep, Kind.TIMEOUT)).isTrue();
    assertThat(SandboxException.hasKind(deep, Kind.ABORTED)).isFalse();
    assertThat(SandboxException.httpStatus(deep)).isEqualTo(504);
  }

  @Test
  void kindsAreFoundInEverySuppressedBranchLikeAGoJoin() {
    RuntimeException joined = new RuntimeException("joined");
    joined.addSuppressed(new RuntimeException("first", of(Kind.CONFLICT)));
    joined.addSuppressed(new RuntimeException("plain"));
    joined.addSuppressed(of(Kind.NOT_AVAILABLE));

    assertThat(SandboxException.kindsOf(joined))
        .containsExactlyInAnyOrder(Kind.CONFLICT, Kind.NOT_AVAILABLE);
    assertThat(SandboxException.hasKind(joined, Kind.CONFLICT)).isTrue();
    assertThat(SandboxException.hasKind(joined, Kind.NOT_AVAILABLE)).isTrue();
    // CONFLICT comes before NOT_AVAILABLE in the seed order.
    assertThat(SandboxException.httpStatus(joined)).isEqualTo(409);
  }

  @Test
  void suppressedExceptionsOfACauseAreSearchedToo() {
    RuntimeException middle = new RuntimeException("middle");
    middle.addSuppressed(of(Kind.BUDGET_EXCEEDED));
    SandboxException top = new SandboxException(Kind.INTERNAL, "top", middle);

    assertThat(SandboxException.kindsOf(top))
        .containsExactlyInAnyOrder(Kind.INTERNAL, Kind.BUDGET_EXCEEDED);
    assertThat(SandboxException.httpStatus(top)).isEqualTo(429);
  }

  @Test
  void wrappingKindsStackAndStatusFollowsSeedOrder() {
    SandboxException inner = of(Kind.VALIDATION);
    SandboxException outer = new SandboxException(Kind.NOT_FOUND, inner.getMessage(), inner);

    assertThat(outer.kind()).isEqualTo(Kind.NOT_FOUND);
    assertThat(SandboxException.hasKind(outer, Kind.NOT_FOUND)).isTrue();
    assertThat(SandboxException.hasKind(outer, Kind.VALIDATION)).isTrue();
    assertThat(SandboxException.kindsOf(outer))
        .containsExactlyInAnyOrder(Kind.NOT_FOUND, Kind.VALIDATION);
    assertThat(SandboxException.httpStatus(outer)).isEqualTo(404);
    // The inner error alone stays VALIDATION only.
    assertThat(SandboxException.kindsOf(inner)).containsExactly(Kind.VALIDATION);
  }

  @Test
  void budgetExceededIsNotRateLimitAndViceVersa() {
    assertThat(SandboxException.hasKind(of(Kind.BUDGET_EXCEEDED), Kind.RATE_LIMIT)).isFalse();
    assertThat(SandboxException.hasKind(of(Kind.RATE_LIMIT), Kind.BUDGET_EXCEEDED)).isFalse();
    assertThat(Kind.BUDGET_EXCEEDED.httpStatus()).isEqualTo(Kind.RATE_LIMIT.httpStatus());
  }

  @Test
  void policyDeniedIsNotForbiddenAndViceVersa() {
    assertThat(SandboxException.hasKind(of(Kind.POLICY_DENIED), Kind.FORBIDDEN)).isFalse();
    assertThat(SandboxException.hasKind(of(Kind.FORBIDDEN), Kind.POLICY_DENIED)).isFalse();
    assertThat(Kind.POLICY_DENIED.httpStatus()).isEqualTo(Kind.FORBIDDEN.httpStatus());
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aSingleKindCarriesNoOtherKind(Kind kind) {
    SandboxException e = of(kind);
    for (Kind other : Kind.values()) {
      assertThat(SandboxException.hasKind(e, other))
          .as("%s has %s", kind, other)
          .isEqualTo(other == kind);
    }
  }

  @Test
  void nullIsStatus200UnclassifiedAndHasNoKinds() {
    assertThat(SandboxException.httpStatus(null)).isEqualTo(200);
    assertThat(SandboxException.isClassified(null)).isFalse();
    assertThat(SandboxException.kindsOf(null)).isEmpty();
    assertThat(SandboxException.hasKind(null, Kind.INTERNAL)).isFalse();
  }

  @Test
  void unclassifiedErrorIsStatus500() {
    RuntimeException plain = new RuntimeException("plain", new IllegalStateException("inner"));

    assertThat(SandboxException.httpStatus(plain)).isEqualTo(500);
    assertThat(SandboxException.isClassified(plain)).isFalse();
    assertThat(SandboxException.kindsOf(plain)).isEmpty();
  }

  static Stream<Arguments> orderedPairs() {
    List<Arguments> pairs = new ArrayList<>();
    for (int i = 0; i < SEED_ORDER.size(); i++) {
      for (int j = i + 1; j < SEED_ORDER.size(); j++) {
        pairs.add(Arguments.of(SEED_ORDER.get(i), SEED_ORDER.get(j)));
      }
    }
    return pairs.stream();
  }

  @ParameterizedTest(name = "{0} beats {1}")
  @MethodSource("orderedPairs")
  void httpStatusPicksTheEarlierKindInSeedOrderWhicheverWraps(Kind earlier, Kind later) {
    SandboxException laterOutside =
        new SandboxException(later, "outer", new RuntimeException("mid", of(earlier)));
    SandboxException earlierOutside = new SandboxException(earlier, "outer", of(later));
    RuntimeException joined = new RuntimeException("join");
    joined.addSuppressed(of(later));
    joined.addSuppressed(of(earlier));

    assertThat(SandboxException.httpStatus(laterOutside)).isEqualTo(earlier.httpStatus());
    assertThat(SandboxException.httpStatus(earlierOutside)).isEqualTo(earlier.httpStatus());
    assertThat(SandboxException.httpStatus(joined)).isEqualTo(earlier.httpStatus());
    assertThat(SandboxException.kindsOf(joined)).isEqualTo(EnumSet.of(earlier, later));
  }

  @Test
  @Timeout(5)
  void aCauseCycleDoesNotLoopForever() {
    RuntimeException inner = new RuntimeException("inner");
    SandboxException outer = new SandboxException(Kind.TIMEOUT, "outer", inner);
    inner.initCause(outer);

    assertThat(SandboxException.kindsOf(inner)).containsExactly(Kind.TIMEOUT);
    assertThat(SandboxException.hasKind(outer, Kind.ABORTED)).isFalse();
    assertThat(SandboxException.httpStatus(inner)).isEqualTo(504);
  }

  @Test
  @Timeout(5)
  void aSuppressedCycleDoesNotLoopForever() {
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.addSuppressed(b);
    b.addSuppressed(of(Kind.CONFLICT));

    assertThat(SandboxException.kindsOf(a)).containsExactly(Kind.CONFLICT);
    assertThat(SandboxException.kindsOf(b)).containsExactly(Kind.CONFLICT);
    assertThat(SandboxException.isClassified(a)).isTrue();
  }

  @Test
  @Timeout(5)
  void anUnclassifiedCycleIsUnclassified() {
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.initCause(b);

    assertThat(SandboxException.isClassified(a)).isFalse();
    assertThat(SandboxException.httpStatus(a)).isEqualTo(500);
  }

  @Test
  void partialResultIsAbsentForPreStartErrors() {
    assertThat(of(Kind.POLICY_DENIED).partialResult()).isEmpty();
    assertThat(new SandboxException(Kind.FORBIDDEN, "m", null).partialResult()).isEmpty();
  }

  @Test
  void partialResultIsPresentWhenGiven() {
    ExecResult partial = ExecResult.of(-1, "so far", "");
    SandboxException e = new SandboxException(Kind.TIMEOUT, "sandbox: timed out", null, partial);

    assertThat(e.partialResult()).containsSame(partial);
    assertThat(e.partialResult().orElseThrow().stdoutText()).isEqualTo("so far");
    assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
  }

  @Test
  void pathTraversalIsForbiddenAndNamesTheWorkdir() {
    PathTraversalException e = new PathTraversalException("../etc", "/srv/root");

    assertThat(e.kind()).isEqualTo(Kind.FORBIDDEN);
    assertThat(SandboxException.httpStatus(e)).isEqualTo(403);
    assertThat(e.getMessage())
        .startsWith("sandbox: path traversal denied")
        .startsWith(PathTraversalException.MESSAGE)
        .contains("workdir \"../etc\"")
        .contains("/srv/root");
    assertThat(e.path()).isEqualTo("../etc");
    assertThat(e.root()).isEqualTo("/srv/root");
    assertThat(e.partialResult()).isEmpty();
  }

  @Test
  void pathTraversalIsFoundByTypeAndKindThroughWrappers() {
    RuntimeException wrapped =
        new RuntimeException("resolve failed", new PathTraversalException("/etc", "/root"));

    assertThat(SandboxException.hasKind(wrapped, Kind.FORBIDDEN)).isTrue();
    assertThat(wrapped.getCause()).isInstanceOf(PathTraversalException.class);
    assertThat(SandboxException.hasKind(of(Kind.FORBIDDEN), Kind.FORBIDDEN)).isTrue();
    assertThat(of(Kind.FORBIDDEN)).isNotInstanceOf(PathTraversalException.class);
  }

  @Test
  void processClosedIsConflictWithTheSeedMessage() {
    ProcessClosedException e = new ProcessClosedException();

    assertThat(e.kind()).isEqualTo(Kind.CONFLICT);
    assertThat(e).hasMessage("sandbox: process session is closed");
    assertThat(SandboxException.httpStatus(e)).isEqualTo(409);
  }

  @Test
  void sequenceGapIsNotFoundAndCarriesTheCursors() {
    SequenceGapException e = new SequenceGapException(5, 1024);

    assertThat(e.kind()).isEqualTo(Kind.NOT_FOUND);
    assertThat(e.getMessage())
        .startsWith("sandbox: output sequence gap; buffered output was truncated")
        .contains("afterSeq 5")
        .contains("retained from 1024");
    assertThat(e.afterSeq()).isEqualTo(5);
    assertThat(e.retainedFrom()).isEqualTo(1024);
    assertThat(SandboxException.httpStatus(e)).isEqualTo(404);
  }
}
