package dev.confine.linux.confinement;

import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The paths a confinement's Landlock ruleset grants, and the rights on each. Landlock only grants
 * (a rule on a directory covers everything beneath it), so a bound of the form "everything except
 * X" is a cover: rules on the siblings of every directory on the way to X, never on X or on a
 * directory above it.
 *
 * <p>What is kept from the children, read and write alike, is the device directory: every {@code
 * /dev} (devtmpfs) and every {@code devpts} mount, wherever it is mounted. Inside them only a short
 * list stays reachable ({@link #DEVICE_ALLOW_LIST}: the null and random devices, {@code /dev/tty}
 * (a process's own controlling terminal, nobody else's), {@code /dev/ptmx} (makes a new pty) and
 * the shared-memory directories) plus, for a session, its own pty. So a child can neither read
 * another terminal (keystrokes typed into an operator's shell), nor write to one, nor read a disk,
 * a console, the kernel log device or an input device, whatever their permissions; files and
 * devices outside {@code /dev} keep their own permissions (a device node on an ordinary file
 * system, in a chroot's {@code dev} directory say, is not found by this).
 */
final class LandlockRules {
  private LandlockRules() {}

  /** What stays reachable in a device directory, relative to it. */
  static final List<String> DEVICE_ALLOW_LIST =
      List.of("null", "zero", "full", "random", "urandom", "tty", "ptmx", "shm", "mqueue");

  /** A path and the rights a rule on it grants. */
  record Rule(Path path, long access) {}

  /**
   * The device directories of a mount table.
   *
   * @param devices where devtmpfs is mounted, and {@code /dev}: the allow-list applies there
   * @param terminals where devpts is mounted: nothing there but a session's own pty
   */
  record DeviceDirs(List<String> devices, List<String> terminals) {
    List<Path> all() {
      List<Path> out = new ArrayList<>();
      devices.forEach(d -> out.add(Path.of(d)));
      terminals.forEach(d -> out.add(Path.of(d)));
      return out;
    }
  }

  /**
   * The rules: read access everywhere but the device directories, write access beneath each of
   * {@code writable}, and both on the allowed devices and {@code terminal}.
   *
   * @param readAccess the read right (Landlock's READ_FILE), 0 when reads are not bounded
   * @param writeAccess every write-side right the ruleset handles
   * @param writable absolute, symlink-free paths (missing ones are skipped)
   * @param terminal the child's own pty, or null
   * @param dirs the device directories of the thread's mount table ({@link #deviceDirs})
   * @throws ConfinementException when a writable path lies in a device directory but is not one of
   *     the allowed devices (see {@link #DEVICE_ALLOW_LIST}), or a directory cannot be listed
   */
  static List<Rule> build(
      long readAccess, long writeAccess, List<String> writable, String terminal, DeviceDirs dirs) {
    List<Path> excluded = dirs.all();
    Map<Path, Long> rules = new LinkedHashMap<>();
    if (readAccess != 0) {
      cover(Path.of("/"), excluded, readAccess, rules);
    }
    List<Path> allowed = allowedDevices(dirs);
    if (readAccess != 0) {
      for (Path p : allowed) {
        if (Files.exists(p, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(p)) {
          rules.merge(p, readAccess, (a, b) -> a | b);
        }
      }
    }
    for (String w : writable) {
      Path p = Path.of(w);
      if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
        continue;
      }
      if (isAtOrBeneathAny(p, excluded)) {
        refusal(p, dirs)
            .ifPresent(
                why -> {
                  throw new ConfinementException("landlock", why, 0);
                });
        rules.merge(p, writeAccess | readAccess, (a, b) -> a | b);
      } else {
        cover(p, excluded, writeAccess, rules);
      }
    }
    if (terminal != null) {
      rules.merge(Path.of(terminal), writeAccess | readAccess, (a, b) -> a | b);
    }
    List<Rule> out = new ArrayList<>(rules.size());
    rules.forEach((p, a) -> out.add(new Rule(p, a)));
    return out;
  }

  /** The allowed entries of the device directories (see {@link #DEVICE_ALLOW_LIST}). */
  private static List<Path> allowedDevices(DeviceDirs dirs) {
    List<Path> excluded = dirs.all();
    List<Path> allowed = new ArrayList<>();
    for (String dir : dirs.devices()) {
      for (String name : DEVICE_ALLOW_LIST) {
        Path p = Path.of(dir, name);
        // Not what another device directory mounted beneath this one holds (/dev/pts/ptmx).
        if (!beneathAny(p, excluded, p.getParent())) {
          allowed.add(p);
        }
      }
    }
    return allowed;
  }

  /**
   * Why {@code path} (absolute, resolved) cannot be writable for confined children: it lies in a
   * device directory but is not one of the allowed devices; empty when it can.
   */
  static Optional<String> refusal(Path path, DeviceDirs dirs) {
    if (!isAtOrBeneathAny(path, dirs.all()) || isAtOrBeneathAny(path, allowedDevices(dirs))) {
      return Optional.empty();
    }
    return Optional.of(
        "writable path "
            + path
            + " lies in a device directory, where confined children reach only "
            + String.join(", ", DEVICE_ALLOW_LIST)
            + " and a session's own pty: it would expose the host's terminals and disks");
  }

  /**
   * Grants {@code access} beneath {@code dir} except beneath the excluded paths: one rule on {@code
   * dir} when no excluded path lies beneath it, else rules on its entries (symbolic links skipped:
   * what they point to is granted where it lies, or not).
   */
  private static void cover(Path dir, List<Path> excluded, long access, Map<Path, Long> rules) {
    if (isAtOrBeneathAny(dir, excluded)) {
      return;
    }
    boolean above = false;
    for (Path e : excluded) {
      if (e.startsWith(dir)) {
        above = true;
        break;
      }
    }
    if (!above) {
      rules.merge(dir, access, (a, b) -> a | b);
      return;
    }
    Set<Path> entries = new TreeSet<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path entry : ds) {
        entries.add(entry);
      }
    } catch (IOException | DirectoryIteratorException e) {
      throw new ConfinementException("landlock", "list " + dir + ": " + e, 0);
    }
    for (Path entry : entries) {
      BasicFileAttributes attrs;
      try {
        attrs = Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      } catch (IOException e) {
        continue; // gone since it was listed
      }
      if (attrs.isSymbolicLink()) {
        continue;
      }
      if (attrs.isDirectory()) {
        cover(entry, excluded, access, rules);
      } else if (!isAtOrBeneathAny(entry, excluded)) {
        rules.merge(entry, access, (a, b) -> a | b);
      }
    }
  }

  private static boolean isAtOrBeneathAny(Path p, List<Path> roots) {
    for (Path r : roots) {
      if (p.startsWith(r)) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code p} lies at or beneath one of {@code roots} other than {@code except}. */
  private static boolean beneathAny(Path p, List<Path> roots, Path except) {
    for (Path r : roots) {
      if (!r.equals(except) && p.startsWith(r)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The device directories of a {@code /proc/.../mountinfo} text: where devtmpfs is mounted, plus
   * {@code /dev} (the device directory even where it is not a mount of its own), and where devpts
   * is mounted.
   */
  static DeviceDirs deviceDirs(String mountinfo) {
    return deviceDirs(mountinfo, p -> Files.isDirectory(Path.of(p), LinkOption.NOFOLLOW_LINKS));
  }

  /**
   * As {@link #deviceDirs(String)}, with {@code isDirectory} telling mount points that are
   * directories from single files bound onto themselves (a read-only host's {@code /dev/null}).
   */
  static DeviceDirs deviceDirs(String mountinfo, Predicate<String> isDirectory) {
    Set<String> devices = new TreeSet<>();
    Set<String> terminals = new TreeSet<>();
    devices.add("/dev");
    for (String line : mountinfo.split("\n")) {
      int sep = line.indexOf(" - ");
      if (sep < 0) {
        continue;
      }
      String type = line.substring(sep + 3).split(" ", 2)[0];
      if (type.equals("devtmpfs") || type.equals("devpts")) {
        List<String> point = ThreadNamespaces.mountPoints(line);
        if (!point.isEmpty() && isDirectory.test(point.get(0))) {
          (type.equals("devpts") ? terminals : devices).add(point.get(0));
        }
      }
    }
    return new DeviceDirs(List.copyOf(devices), List.copyOf(terminals));
  }
}
