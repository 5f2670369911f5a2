package dev.confine.linux.confinement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.confinement.LandlockRules.DeviceDirs;
import dev.confine.linux.confinement.LandlockRules.Rule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cover of "everything but the device directories" that Landlock's grant-only rules need. What
 * the kernel does with it: ConfinedBoundaryTest.
 */
@Tag("confinement")
class LandlockRulesTest {
  private static final long READ = 1;
  private static final long WRITE = 2;
  private static final DeviceDirs DEV = new DeviceDirs(List.of("/dev"), List.of("/dev/pts"));

  @TempDir Path tmp;

  private static Map<Path, Long> rules(List<Rule> rules) {
    return rules.stream().collect(Collectors.toMap(Rule::path, Rule::access));
  }

  @Test
  void readsCoverEverythingButTheDeviceDirectories() {
    Map<Path, Long> r = rules(LandlockRules.build(READ, WRITE, List.of(), null, DEV));
    assertThat(r).doesNotContainKeys(Path.of("/"), Path.of("/dev"), Path.of("/dev/pts"));
    assertThat(r).containsEntry(Path.of("/usr"), READ).containsEntry(Path.of("/proc"), READ);
    assertThat(r.keySet())
        .filteredOn(p -> p.startsWith("/dev"))
        .allSatisfy(
            p -> assertThat(p.getFileName().toString()).isIn(LandlockRules.DEVICE_ALLOW_LIST));
    assertThat(r).containsKeys(Path.of("/dev/null"), Path.of("/dev/tty"), Path.of("/dev/urandom"));
    assertThat(r.keySet()).noneMatch(p -> p.startsWith("/dev/pts"));
  }

  @Test
  void writesCoverEachWritablePathButNoDeviceDirectory() {
    Map<Path, Long> r =
        rules(
            LandlockRules.build(
                READ, WRITE, List.of(tmp.toString(), "/", "/dev/null"), "/dev/pts/7", DEV));
    assertThat(r.get(tmp) & WRITE).isEqualTo(WRITE);
    // "/" itself cannot take a rule (it holds /dev): its entries do
    assertThat(r).doesNotContainKey(Path.of("/"));
    assertThat(r.get(Path.of("/usr"))).isEqualTo(READ | WRITE);
    assertThat(r).containsEntry(Path.of("/dev/null"), READ | WRITE);
    assertThat(r).containsEntry(Path.of("/dev/zero"), READ); // readable, not named writable
    assertThat(r).containsEntry(Path.of("/dev/pts/7"), READ | WRITE); // the session's own pty
  }

  @Test
  void aDeviceDirectoryAnywhereIsCutOutOfTheCover() throws IOException {
    Path chroot = Files.createDirectories(tmp.resolve("a/chroot/dev"));
    Files.createDirectories(tmp.resolve("a/chroot/etc"));
    Files.writeString(tmp.resolve("a/file"), "x");
    Files.createSymbolicLink(tmp.resolve("a/link"), Path.of("/"));
    DeviceDirs dirs = new DeviceDirs(List.of("/dev", chroot.toString()), List.of("/dev/pts"));
    Map<Path, Long> r =
        rules(LandlockRules.build(READ, WRITE, List.of(tmp.toString()), null, dirs));
    assertThat(r).doesNotContainKeys(tmp, tmp.resolve("a"), tmp.resolve("a/chroot"), chroot);
    assertThat(r)
        .containsEntry(tmp.resolve("a/chroot/etc"), READ | WRITE)
        .containsEntry(tmp.resolve("a/file"), READ | WRITE);
    assertThat(r).doesNotContainKey(tmp.resolve("a/link")); // links are never followed
  }

  @Test
  void aWritablePathInADeviceDirectoryIsRefusedUnlessAllowed() {
    for (String w : List.of("/dev", "/dev/pts", "/dev/console")) {
      assertThatThrownBy(() -> LandlockRules.build(READ, WRITE, List.of(w), null, DEV))
          .as(w)
          .isInstanceOf(ConfinementException.class)
          .hasMessageContaining("device directory");
    }
    for (String w : List.of("/dev", "/dev/pts", "/dev/pts/0", "/dev/console", "/dev/shm/../vda")) {
      assertThat(LandlockRules.refusal(Path.of(w).normalize(), DEV)).as(w).isPresent();
    }
    for (String w : List.of("/dev/null", "/dev/shm", "/tmp")) {
      assertThat(LandlockRules.refusal(Path.of(w), DEV)).as(w).isEmpty();
    }
  }

  @Test
  void deviceDirectoriesComeFromTheMountTable() {
    String mountinfo =
        "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
            + "22 26 0:5 / /dev rw,nosuid - devtmpfs udev rw\n"
            + "25 22 0:23 / /dev/pts rw,relatime - devpts devpts rw,mode=600\n"
            + "28 25 0:25 / /dev/pts rw,relatime - devpts devpts rw,mode=600\n"
            + "40 26 0:5 / /srv/chroot\\040x/dev rw - devtmpfs udev rw\n"
            + "41 26 0:5 /null /dev/null rw - devtmpfs udev rw\n"
            + "42 26 0:40 / /dev/shm rw - tmpfs tmpfs rw\n";
    DeviceDirs d = LandlockRules.deviceDirs(mountinfo, p -> !p.equals("/dev/null"));
    assertThat(d.devices()).containsExactly("/dev", "/srv/chroot x/dev");
    assertThat(d.terminals()).containsExactly("/dev/pts");
    assertThat(LandlockRules.deviceDirs("", p -> true).devices()).containsExactly("/dev");
  }
}
