package dev.confine.linux.sys;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectoriesTest {
  @TempDir Path dir;

  @Test
  void anEmptyDirectoryIsEmpty() {
    assertThat(Directories.isEmpty(dir)).isTrue();
  }

  @Test
  void namesThatOnlyLookLikeDotsCount() throws IOException {
    for (String name : new String[] {"...", ".a", "..b", "a"}) {
      Path p = Files.createFile(dir.resolve(name));
      assertThat(Directories.isEmpty(dir)).as(name).isFalse();
      Files.delete(p);
    }
    assertThat(Directories.isEmpty(dir)).isTrue();
  }

  @Test
  void aSubdirectoryCounts() throws IOException {
    Files.createDirectory(dir.resolve("sub"));
    assertThat(Directories.isEmpty(dir)).isFalse();
  }

  @Test
  void aLinkToAnEmptyDirectoryIsNotFollowed() throws IOException {
    Path target = Files.createDirectory(dir.resolve("target"));
    Path link = Files.createSymbolicLink(dir.resolve("link"), target);
    assertThat(Directories.isEmpty(target)).isTrue();
    assertThat(Directories.isEmpty(link)).isFalse();
  }

  @Test
  void aFileOrAMissingPathIsNotAnEmptyDirectory() throws IOException {
    assertThat(Directories.isEmpty(Files.createFile(dir.resolve("f")))).isFalse();
    assertThat(Directories.isEmpty(dir.resolve("missing"))).isFalse();
  }
}
