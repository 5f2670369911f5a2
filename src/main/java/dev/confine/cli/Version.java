package dev.confine.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine;

/** What {@code --version} prints: {@code confine} and the version the build wrote. */
final class Version implements CommandLine.IVersionProvider {
  /** The project's version, from the {@code version.properties} the build filters. */
  static String number() {
    try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        return "unknown";
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version", "unknown");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public String[] getVersion() {
    return new String[] {"confine " + number()};
  }
}
