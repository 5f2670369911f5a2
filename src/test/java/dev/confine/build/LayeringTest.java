package dev.confine.build;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.equivalentTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The layer rules of the design, checked on the compiled main classes: each layer knows only the
 * layers below it. From the top: the API ({@code dev.confine}) and the session API ({@code
 * .session}); the backends ({@code .local}, {@code .confined}), which never know each other; what
 * every host-process backend shares ({@code .host}, internal); the OS engine ({@code .linux..},
 * internal), the only code that touches {@code java.lang.foreign} or the generated bindings; and
 * the command ({@code .cli}), which no library code knows. Inside the engine, each package knows
 * only those below it: from the front door ({@code Engine}, {@code Caps}) down through the child's
 * life, confinement, cgroups, the /proc sampler, the tree guard, the event loop and spawning to the
 * system calls. Beside them, the test doubles ({@code .testing}, exported for users' own tests)
 * know only the API, the JDK and the host's pure-Java output log, and no library code knows them.
 * The egress proxy ({@code .net}, its API public and its Netty internals package-private, and its
 * TLS material in {@code .net.tls}, internal) knows only the policy API, Netty, BouncyCastle and
 * the JDK; of the library, only the confined backend (its ALLOW_LIST and PROXY) and the command
 * know it. The seatbelt backend ({@code .seatbelt}) knows only the API, the session API, {@code
 * .host} and the JDK, and no other library code knows it.
 */
class LayeringTest {
  private static final String API = "dev.confine";
  private static final String SESSION = "dev.confine.session..";
  private static final String LOCAL = "dev.confine.local..";
  private static final String CONFINED = "dev.confine.confined..";
  private static final String SEATBELT = "dev.confine.seatbelt..";
  private static final String HOST = "dev.confine.host..";
  private static final String ENGINE = "dev.confine.linux..";
  private static final String BINDINGS = "dev.confine.linux.libc..";
  private static final String CLI = "dev.confine.cli..";
  private static final String TESTING = "dev.confine.testing..";
  private static final String NET = "dev.confine.net..";
  private static final String BWRAP = "dev.confine.bwrap..";

  private static final JavaClasses MAIN =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
          .importPackages("dev.confine");

  @Test
  void onlyTheEngineTouchesForeignMemory() {
    noClasses()
        .that()
        .resideOutsideOfPackage(ENGINE)
        .should()
        .dependOnClassesThat()
        .resideInAPackage("java.lang.foreign..")
        .because("the FFM API is the engine's alone (design: layers)")
        .check(MAIN);
  }

  @Test
  void onlyTheEngineCallsTheGeneratedBindings() {
    noClasses()
        .that()
        .resideOutsideOfPackage(ENGINE)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(BINDINGS)
        .check(MAIN);
  }

  @Test
  void theApiAndTheSessionApiKnowNoBackendNoEngineAndNoCommand() {
    noClasses()
        .that()
        .resideInAnyPackage(API, SESSION)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(LOCAL, CONFINED, SEATBELT, HOST, ENGINE, CLI, NET)
        .check(MAIN);
  }

  @Test
  void theApiDoesNotKnowTheSessionApi() {
    noClasses()
        .that()
        .resideInAPackage(API)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(SESSION)
        .allowEmptyShould(true)
        .check(MAIN);
  }

  @Test
  void noBackendKnowsAnother() {
    noClasses()
        .that()
        .resideInAPackage(LOCAL)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(CONFINED)
        .check(MAIN);
    noClasses()
        .that()
        .resideInAPackage(CONFINED)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(LOCAL)
        .because("what the backends share lives in dev.confine.host")
        .check(MAIN);
  }

  @Test
  void theSeatbeltBackendKnowsOnlyTheApiWhatTheBackendsShareAndTheJdk() {
    classes()
        .that()
        .resideInAPackage(SEATBELT)
        .should()
        .onlyDependOnClassesThat(resideInAnyPackage(API, SESSION, SEATBELT, HOST, "java.."))
        .because(
            "it is a backend like the others (so no other backend), has no exec path and so no"
                + " engine, and no egress proxy yet")
        .check(MAIN);
    noClasses()
        .that()
        .resideInAnyPackage(API, SESSION, LOCAL, CONFINED, HOST, ENGINE, NET, TESTING)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(SEATBELT)
        .check(MAIN);
  }

  @Test
  void whatTheBackendsShareKnowsNoBackend() {
    noClasses()
        .that()
        .resideInAPackage(HOST)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(LOCAL, CONFINED, SEATBELT, CLI)
        .check(MAIN);
  }

  @Test
  void theEgressProxyKnowsOnlyThePolicyApiNettyBouncyCastleAndTheJdk() {
    classes()
        .that()
        .resideInAPackage(NET)
        .should()
        .onlyDependOnClassesThat(
            resideInAnyPackage(
                API, NET, "java..", "javax..", "io.netty..", "org.bouncycastle..", "org.slf4j.."))
        .because(
            "the proxy is a component of its own: any backend (or a person, through confine"
                + " proxy) uses it, and it uses no backend, engine or command")
        .check(MAIN);
  }

  @Test
  void onlyTheConfinedBackendAndTheCommandKnowTheEgressProxy() {
    noClasses()
        .that()
        .resideInAnyPackage(API, SESSION, LOCAL, HOST, ENGINE, TESTING)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(NET)
        .because(
            "the proxy is used through its public API by the backends that enforce ALLOW_LIST"
                + " and PROXY (the confined runner) and by confine proxy")
        .check(MAIN);
  }

  @Test
  void theEngineKnowsNothingAboveIt() {
    noClasses()
        .that()
        .resideInAPackage(ENGINE)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(SESSION, LOCAL, CONFINED, SEATBELT, HOST, CLI)
        .check(MAIN);
  }

  @Test
  void theLocalBackendKnowsTheEngineOnlyByItsFrontDoor() {
    noClasses()
        .that()
        .resideInAPackage(LOCAL)
        .should()
        .dependOnClassesThat(
            resideInAPackage("dev.confine.linux.(*)..")
                .and(not(equivalentTo(dev.confine.linux.sys.Availability.class))))
        .because(
            "a backend asks the engine (Engine, Caps, and the Availability they answer with),"
                + " never its mechanisms")
        .check(MAIN);
  }

  /**
   * The host classes the test doubles build on, the real sessions' log (pure Java), with their
   * nested classes and arrays of them; by name, as {@code ChunkStore} is package-private.
   */
  private static final DescribedPredicate<JavaClass> THE_HOST_LOG =
      nameMatching("(\\[L)?dev\\.confine\\.host\\.(OutputLog|ChunkStore|Deadlines)(\\$.*)?;?")
          .as("are the host's output log (OutputLog, ChunkStore, Deadlines)")
          .forSubtype();

  @Test
  void theTestDoublesKnowOnlyTheApiTheHostLogAndTheJdk() {
    classes()
        .that()
        .resideInAPackage(TESTING)
        .should()
        .onlyDependOnClassesThat(
            resideInAnyPackage(API, SESSION, TESTING, "java..").or(THE_HOST_LOG))
        .because(
            "users' tests load the fakes without a backend, the engine or the command (no"
                + " dev.confine.local, .confined, .linux or .cli, and of .host only the log the"
                + " real sessions keep, so that the fakes replay output exactly as they do)")
        .check(MAIN);
  }

  @Test
  void theHostLogTheTestDoublesUseIsPureJava() {
    classes()
        .that(THE_HOST_LOG)
        .should()
        .onlyDependOnClassesThat(resideInAnyPackage(API, SESSION, "java..").or(THE_HOST_LOG))
        .because("the fakes must load without the engine or native access")
        .check(MAIN);
  }

  @Test
  void noBackendAndNothingSharedReachesTheEngineMechanismsBehindCapsAndTheLoop() {
    noClasses()
        .that()
        .resideInAnyPackage(LOCAL, CONFINED, HOST, CLI)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "dev.confine.linux.loop..", "dev.confine.linux.cgroup..", "dev.confine.linux.proc..")
        .because("caps and tree tracking are chosen once, in the engine's Caps")
        .check(MAIN);
  }

  @Test
  void theEnginePackagesAreLayeredByJob() {
    layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("front door")
        .definedBy("dev.confine.linux")
        .layer("child")
        .definedBy("dev.confine.linux.child..")
        .layer("confinement")
        .definedBy("dev.confine.linux.confinement..")
        .layer("cgroup")
        .definedBy("dev.confine.linux.cgroup..")
        .layer("proc")
        .definedBy("dev.confine.linux.proc..")
        .layer("tree")
        .definedBy("dev.confine.linux.tree..")
        .layer("loop")
        .definedBy("dev.confine.linux.loop..")
        .layer("spawn")
        .definedBy("dev.confine.linux.spawn..")
        .layer("sys")
        .definedBy("dev.confine.linux.sys..")
        .whereLayer("front door")
        .mayNotBeAccessedByAnyLayer()
        .whereLayer("child")
        .mayOnlyBeAccessedByLayers("front door")
        .whereLayer("confinement")
        .mayOnlyBeAccessedByLayers("front door")
        .whereLayer("cgroup")
        .mayOnlyBeAccessedByLayers("front door")
        .whereLayer("proc")
        .mayOnlyBeAccessedByLayers("front door", "cgroup", "confinement")
        .whereLayer("tree")
        .mayOnlyBeAccessedByLayers("front door", "child", "confinement", "cgroup", "proc")
        .whereLayer("loop")
        .mayOnlyBeAccessedByLayers("front door", "child", "confinement")
        .whereLayer("spawn")
        .mayOnlyBeAccessedByLayers(
            "front door", "child", "confinement", "cgroup", "proc", "tree", "loop")
        .check(MAIN);
  }

  @Test
  void noLibraryCodeKnowsTheTestDoubles() {
    noClasses()
        .that()
        .resideOutsideOfPackage(TESTING)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(TESTING)
        .because("the fakes are for tests; the command's tests hand a FakeRunner in themselves")
        .check(MAIN);
  }

  /**
   * The bubblewrap backend ({@code .bwrap}, internal for now) is a backend like the others: it uses
   * no other backend and knows the engine only by its front door, and of the library only the
   * command may know it.
   */
  @Test
  void theBwrapBackendIsABackendLikeTheOthers() {
    noClasses()
        .that()
        .resideInAPackage(BWRAP)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(LOCAL, CONFINED, "dev.confine.seatbelt..", CLI, TESTING)
        .because("a backend never uses another; what they share lives in dev.confine.host")
        .check(MAIN);
    noClasses()
        .that()
        .resideInAPackage(BWRAP)
        .should()
        .dependOnClassesThat(
            resideInAPackage("dev.confine.linux.(*)..")
                .and(not(equivalentTo(dev.confine.linux.sys.Availability.class))))
        .because("a backend asks the engine by its front door, never its mechanisms")
        .check(MAIN);
    noClasses()
        .that()
        .resideInAnyPackage(API, SESSION, LOCAL, CONFINED, HOST, ENGINE, NET, TESTING)
        .should()
        .dependOnClassesThat()
        .resideInAPackage(BWRAP)
        .check(MAIN);
  }

  @Test
  void noPackagesDependOnEachOtherInACycle() {
    slices().matching("dev.confine.(**)").should().beFreeOfCycles().check(MAIN);
  }
}
