package dev.confine.linux.cgroup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The cgroup hierarchies this process can see and where it sits in each, read from {@code
 * /proc/self/mountinfo} and {@code /proc/self/cgroup}: pure v2, v1, or hybrid (v1 controllers plus
 * a v2 hierarchy, possibly without controllers). Discovery only: nothing is created here.
 *
 * @param v2 the unified hierarchy, if mounted
 * @param v1 the v1 hierarchies by controller name ({@code memory}, {@code pids}, {@code cpu}, ...)
 */
public record CgroupLayout(Optional<Hierarchy> v2, Map<String, Hierarchy> v1) {

  /**
   * One mounted hierarchy.
   *
   * @param mountPoint where it is mounted
   * @param ownPath this process's cgroup in it, as a directory beneath the mount point
   * @param controllers the controllers of this hierarchy (v1: those mounted together; v2: those
   *     available to this process's cgroup, from {@code cgroup.controllers})
   */
  public record Hierarchy(Path mountPoint, Path ownPath, Set<String> controllers) {}

  /** Which kinds of hierarchy are mounted. */
  public enum Mode {
    /** Only the unified hierarchy. */
    V2,
    /** Only v1 hierarchies. */
    V1,
    /** v1 controllers and a unified hierarchy. */
    HYBRID,
    /** No cgroup hierarchy at all. */
    NONE
  }

  /** Which kinds of hierarchy are mounted. */
  public Mode mode() {
    if (v2.isPresent()) {
      return v1.isEmpty() ? Mode.V2 : Mode.HYBRID;
    }
    return v1.isEmpty() ? Mode.NONE : Mode.V1;
  }

  /** Reads the layout of this process. */
  public static CgroupLayout discover() throws IOException {
    CgroupLayout layout =
        parse(
            Files.readString(Path.of("/proc/self/mountinfo")),
            Files.readString(Path.of("/proc/self/cgroup")));
    return layout.withV2Controllers();
  }

  private CgroupLayout withV2Controllers() {
    if (v2.isEmpty()) {
      return this;
    }
    Hierarchy h = v2.get();
    Set<String> controllers;
    try {
      controllers =
          Set.of(Files.readString(h.ownPath().resolve("cgroup.controllers")).trim().split("\\s+"));
    } catch (IOException e) {
      controllers = Set.of();
    }
    Set<String> clean = new java.util.HashSet<>(controllers);
    clean.remove("");
    return new CgroupLayout(
        Optional.of(new Hierarchy(h.mountPoint(), h.ownPath(), Set.copyOf(clean))), v1);
  }

  /**
   * The layout described by a mountinfo text and a /proc/self/cgroup text (v2 controllers are not
   * read here: the result lists none).
   */
  static CgroupLayout parse(String mountinfo, String procCgroup) {
    Map<String, String> v1Paths = new HashMap<>();
    String v2Path = null;
    for (String line : procCgroup.split("\n")) {
      String[] f = line.split(":", 3);
      if (f.length != 3) {
        continue;
      }
      if (f[0].equals("0") && f[1].isEmpty()) {
        v2Path = f[2];
      } else {
        for (String c : f[1].split(",")) {
          if (!c.isEmpty()) {
            v1Paths.put(c, f[2]);
          }
        }
      }
    }
    Optional<Hierarchy> v2 = Optional.empty();
    Map<String, Hierarchy> v1 = new LinkedHashMap<>();
    for (String line : mountinfo.split("\n")) {
      // id parent major:minor root mountpoint options [optional fields] - fstype source
      // superoptions
      int dash = line.indexOf(" - ");
      if (dash < 0) {
        continue;
      }
      String[] pre = line.substring(0, dash).split(" ");
      String[] post = line.substring(dash + 3).split(" ");
      if (pre.length < 5 || post.length < 3) {
        continue;
      }
      String root = unescape(pre[3]);
      Path mountPoint = Path.of(unescape(pre[4]));
      String fstype = post[0];
      if (fstype.equals("cgroup2") && v2Path != null && v2.isEmpty()) {
        v2 = Optional.of(new Hierarchy(mountPoint, beneath(mountPoint, root, v2Path), Set.of()));
      } else if (fstype.equals("cgroup")) {
        List<String> controllers = new ArrayList<>();
        for (String opt : post[2].split(",")) {
          if (v1Paths.containsKey(opt)) {
            controllers.add(opt);
          }
        }
        for (String c : controllers) {
          v1.putIfAbsent(
              c,
              new Hierarchy(
                  mountPoint, beneath(mountPoint, root, v1Paths.get(c)), Set.copyOf(controllers)));
        }
      }
    }
    return new CgroupLayout(v2, Map.copyOf(v1));
  }

  /**
   * Where cgroup {@code path} is, given a mount of the hierarchy's {@code root} at {@code mount}.
   */
  private static Path beneath(Path mount, String root, String path) {
    String rel = path;
    if (!root.equals("/") && (path.equals(root) || path.startsWith(root + "/"))) {
      rel = path.substring(root.length());
    }
    rel = rel.startsWith("/") ? rel.substring(1) : rel;
    return rel.isEmpty() ? mount : mount.resolve(rel);
  }

  /** mountinfo escapes space, tab, newline and backslash as octal. */
  private static String unescape(String s) {
    if (s.indexOf('\\') < 0) {
      return s;
    }
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 3 < s.length()) {
        b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }
}
