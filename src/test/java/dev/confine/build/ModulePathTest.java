package dev.confine.build;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.sys.NativeAccess;
import dev.confine.testing.ForkedJvm;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The library as the named module {@code dev.confine}, which the other tests (on the class path,
 * where the descriptor is ignored) never see: the descriptor exports the API packages and nothing
 * else, and the {@code confine} command runs from the module path, the engine's native access
 * included. The command's module path is target/classes and the jars of slf4j, its no-op provider,
 * picocli, Netty and BouncyCastle, taken from this JVM's class path.
 */
class ModulePathTest {
  /** The exported packages: the API. A new API package goes here and in module-info.java. */
  private static final Set<String> API =
      Set.of(
          "dev.confine",
          "dev.confine.session",
          "dev.confine.local",
          "dev.confine.confined",
          "dev.confine.seatbelt",
          "dev.confine.bwrap",
          "dev.confine.testing",
          "dev.confine.net");

  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  @Test
  void descriptorExportsExactlyTheApiPackages() {
    ModuleDescriptor d = ApiSurface.descriptor(ApiSurfaceTest.mainClasses());
    assertThat(d.name()).isEqualTo("dev.confine");
    assertThat(d.exports()).allSatisfy(e -> assertThat(e.isQualified()).isFalse());
    assertThat(ApiSurface.exportedPackages(d)).containsExactlyInAnyOrderElementsOf(API);
    // The internals are in the module, and so not exported for want of being there.
    assertThat(d.packages())
        .contains("dev.confine.linux", "dev.confine.linux.libc", "dev.confine.cli");
    // Only picocli may reflect, and only on the command classes.
    assertThat(d.opens())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.source()).isEqualTo("dev.confine.cli");
              assertThat(o.targets()).containsExactly("info.picocli");
            });
    assertThat(d.requires().stream().map(ModuleDescriptor.Requires::name))
        .filteredOn(name -> !name.startsWith("io.netty."))
        .containsExactlyInAnyOrder(
            "java.base",
            "org.slf4j",
            "info.picocli",
            "org.bouncycastle.pkix",
            "org.bouncycastle.provider");
  }

  @Test
  void asANamedModuleOnlyTheApiPackagesAreReachable() throws Exception {
    // The module resolved in a layer of its own, as on a real module path.
    List<Path> paths =
        new ArrayList<>(List.of(ApiSurfaceTest.mainClasses(), jarOf(org.slf4j.Logger.class)));
    paths.addAll(nettyAndBouncyCastle());
    ModuleFinder finder = ModuleFinder.of(paths.toArray(Path[]::new));
    Configuration cf =
        ModuleLayer.boot()
            .configuration()
            .resolve(finder, ModuleFinder.of(), Set.of("dev.confine"));
    ModuleLayer layer =
        ModuleLayer.boot().defineModulesWithOneLoader(cf, ClassLoader.getPlatformClassLoader());
    Module module = layer.findModule("dev.confine").orElseThrow();
    for (String pkg : module.getPackages()) {
      assertThat(module.isExported(pkg)).as(pkg).isEqualTo(API.contains(pkg));
    }
    // A public method of an internal class is out of reach from outside the module.
    Class<?> internal = Class.forName(module, NativeAccess.class.getName());
    assertThat(internal).isNotNull();
    assertThatThrownBy(() -> internal.getMethod("availability").invoke(null))
        .isInstanceOf(IllegalAccessException.class)
        .hasMessageContaining("does not export dev.confine.linux");
  }

  @Test
  void execRunsFromTheModulePath() throws Exception {
    requireEngine();
    ForkedJvm.Outcome r = confine(true, "exec", "--", "echo", "hello");
    assertThat(r.output()).isEqualTo("hello\n");
    assertThat(r.exitCode()).as(r.output()).isZero();
  }

  @Test
  void doctorRunsFromTheModulePath() throws Exception {
    requireEngine();
    ForkedJvm.Outcome r = confine(true, "doctor");
    assertThat(r.exitCode()).as(r.output()).isZero();
    assertThat(r.output().lines())
        .anyMatch(l -> l.matches("spawn +yes +.+"))
        .anyMatch(l -> l.matches("memory +(yes|no) +.+"))
        .anyMatch(l -> l.matches("disk +no +no quota mechanism"));
  }

  /**
   * Without {@code --enable-native-access}, JDK 22 to 25 would let the engine's restricted calls
   * through with a warning (the default {@code --illegal-native-access=warn}); Confine's probe
   * refuses first, naming the flag as this module needs it.
   */
  @Test
  void withoutNativeAccessTheCommandNamesTheModulesFlag() throws Exception {
    requireEngine();
    ForkedJvm.Outcome r = confine(false, "exec", "--", "echo", "hello");
    assertThat(r.exitCode()).as(r.output()).isEqualTo(125);
    assertThat(r.output())
        .contains("start java with --enable-native-access=dev.confine")
        .doesNotContain("ALL-UNNAMED")
        .doesNotContain("hello");
  }

  private static void requireEngine() {
    HostRequirements.require(NativeAccess.availability().prefixed("the engine cannot run here: "));
  }

  /** Runs {@code java -m dev.confine/dev.confine.cli.Main args} from the module path. */
  private static ForkedJvm.Outcome confine(boolean nativeAccess, String... args)
      throws IOException, InterruptedException {
    String modulePath =
        Stream.concat(
                Stream.of(
                    ApiSurfaceTest.mainClasses(),
                    jarOf(org.slf4j.Logger.class),
                    jarOf(org.slf4j.nop.NOPServiceProvider.class),
                    jarOf(picocli.CommandLine.class)),
                nettyAndBouncyCastle().stream())
            .map(Path::toString)
            .collect(Collectors.joining(":"));
    List<String> arguments = new ArrayList<>();
    arguments.add("--module-path");
    arguments.add(modulePath);
    // dev.confine requires picocli statically (library users need not have it): the command adds
    // it.
    arguments.add("--add-modules");
    arguments.add("info.picocli");
    if (nativeAccess) {
      arguments.add("--enable-native-access=dev.confine");
    }
    arguments.add("-m");
    arguments.add("dev.confine/dev.confine.cli.Main");
    arguments.addAll(List.of(args));
    // stderr with stdout: the exact output shows that no JVM or slf4j warning came with it.
    return ForkedJvm.java(arguments, TIMEOUT);
  }

  /**
   * The jars of Netty and BouncyCastle on this JVM's class path: the egress proxy's libraries,
   * which the module requires, and theirs.
   */
  private static List<Path> nettyAndBouncyCastle() {
    List<Path> jars =
        Stream.of(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
            .map(Path::of)
            .filter(
                p ->
                    p.getFileName()
                        .toString()
                        .matches("(netty-|bc(prov|pkix|util)-jdk18on-).*\\.jar"))
            .toList();
    assertThat(jars).isNotEmpty();
    return jars;
  }

  /** The jar (or directory) on this JVM's class path that holds {@code type}. */
  private static Path jarOf(Class<?> type) {
    try {
      return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
