package dev.confine.linux.confinement;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The pure parts of the mount namespace set-up; the namespaces themselves: ConfinedNamespacesTest.
 */
@Tag("confinement")
class ThreadNamespacesTest {
  @Test
  void mountPointsAreField5WithOctalEscapesDecoded() {
    String mountinfo =
        "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
            + "25 23 0:23 / /dev/pts rw,relatime - devpts devpts rw,mode=600\n"
            + "40 26 0:40 / /mnt/with\\040space\\134and\\011tab rw - tmpfs tmpfs rw\n"
            + "41 26 0:41 / /mnt/not\\08octal rw - tmpfs tmpfs rw\n";
    assertThat(ThreadNamespaces.mountPoints(mountinfo))
        .containsExactly("/", "/dev/pts", "/mnt/with space\\and\ttab", "/mnt/not\\08octal");
  }

  @Test
  void onlyTheOutermostWritablePathsAreBound() {
    assertThat(
            ThreadNamespaces.outermost(
                List.of("/tmp/a/b", "/tmp/a", "/tmp/ab", "/dev/null", "/dev/pts", "/tmp/a")))
        .containsExactly("/dev/null", "/dev/pts", "/tmp/a", "/tmp/ab");
    assertThat(ThreadNamespaces.outermost(List.of("/srv", "/"))).containsExactly("/");
  }

  @Test
  void beneathComparesWholeComponents() {
    List<String> roots = List.of("/tmp/a", "/dev/pts");
    assertThat(ThreadNamespaces.isAtOrBeneath("/tmp/a", roots)).isTrue();
    assertThat(ThreadNamespaces.isAtOrBeneath("/tmp/a/x/y", roots)).isTrue();
    assertThat(ThreadNamespaces.isAtOrBeneath("/tmp/ab", roots)).isFalse();
    assertThat(ThreadNamespaces.isAtOrBeneath("/tmp", roots)).isFalse();
    assertThat(ThreadNamespaces.isAtOrBeneath("/dev/pts", roots)).isTrue();
    assertThat(ThreadNamespaces.isAtOrBeneath("/dev", roots)).isFalse();
  }
}
