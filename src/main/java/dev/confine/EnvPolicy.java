package dev.confine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which environment variables the child sees.
 *
 * <ul>
 *   <li>{@code allow == null}: the child inherits the whole host environment;
 *   <li>{@code allow} empty: the child inherits nothing, only {@code inject} is visible;
 *   <li>{@code allow} non-empty: only the named host variables are forwarded (exact, case-sensitive
 *       names; names the host lacks are simply absent).
 * </ul>
 *
 * <p>{@code inject} is applied on top: an injected name replaces the host's value of that name. It
 * is never null; its iteration order is the order in which the child receives the variables.
 *
 * <p>Every name given here, allowed or injected, is a portable variable name ({@link
 * #isValidName}): a letter or {@code _}, then letters, digits and {@code _}. A name with a newline,
 * {@code =}, a space, {@code -} or {@code %} could pass as two entries or a shell function to a
 * program that parses its environment, so it is refused rather than passed on. Host variables that
 * the allow filter forwards (or that a null allow-list inherits) are the host's own and are not
 * checked.
 *
 * @param allow the host variables to forward, or {@code null} to forward all of them
 * @param inject variables to set in the child, applied after the allow filter
 */
public record EnvPolicy(List<String> allow, Map<String, String> inject) {

  private static final EnvPolicy INHERIT_ALL = new EnvPolicy(null, Map.of());
  private static final EnvPolicy NONE = new EnvPolicy(List.of(), Map.of());

  private static final String NAME_RULE = "[A-Za-z_][A-Za-z0-9_]*";

  /**
   * Validates and copies.
   *
   * @throws SandboxException VALIDATION for a null allow entry, an allowed or injected name that is
   *     not a portable variable name ({@link #isValidName}), or an injected value that is null or
   *     holds NUL
   */
  public EnvPolicy {
    if (allow != null) {
      for (int i = 0; i < allow.size(); i++) {
        String name = allow.get(i);
        if (name == null) {
          throw SandboxException.of(
              SandboxException.Kind.VALIDATION, "env allow entry " + i + " is null");
        }
        if (!isValidName(name)) {
          throw SandboxException.of(
              SandboxException.Kind.VALIDATION,
              "env allow entry "
                  + i
                  + " "
                  + Quote.of(name)
                  + " is invalid (a variable name is "
                  + NAME_RULE
                  + ")");
        }
      }
      allow = List.copyOf(allow);
    }
    if (inject == null) {
      inject = Map.of();
    } else {
      LinkedHashMap<String, String> copy = new LinkedHashMap<>();
      for (Map.Entry<String, String> e : inject.entrySet()) {
        String name = e.getKey();
        String value = e.getValue();
        if (name == null || !isValidName(name)) {
          throw SandboxException.of(
              SandboxException.Kind.VALIDATION,
              "injected env name "
                  + Quote.of(name)
                  + " is invalid (a variable name is "
                  + NAME_RULE
                  + ")");
        }
        if (value == null || value.indexOf('\0') >= 0) {
          throw SandboxException.of(
              SandboxException.Kind.VALIDATION,
              "injected env value for "
                  + Quote.of(name)
                  + (value == null ? " is null" : " contains NUL"));
        }
        copy.put(name, value);
      }
      inject = Collections.unmodifiableMap(copy);
    }
  }

  /**
   * Whether {@code name} is a portable environment variable name: {@code [A-Za-z_][A-Za-z0-9_]*}
   * (POSIX's rule for names the shell and utilities use), so that it can neither be empty nor hold
   * {@code =}, NUL, a newline or anything else a consumer could split on.
   */
  public static boolean isValidName(String name) {
    if (name == null || name.isEmpty()) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
      if (!letter && (i == 0 || c < '0' || c > '9')) {
        return false;
      }
    }
    return true;
  }

  /** The child inherits the whole host environment. */
  public static EnvPolicy inheritAll() {
    return INHERIT_ALL;
  }

  /** The child inherits nothing from the host. */
  public static EnvPolicy none() {
    return NONE;
  }

  /** The child inherits only the named host variables. */
  public static EnvPolicy allow(String... names) {
    return new EnvPolicy(Arrays.asList(names), Map.of());
  }

  /** The child inherits only the named host variables. */
  public static EnvPolicy allow(Collection<String> names) {
    return new EnvPolicy(new ArrayList<>(names), Map.of());
  }

  /**
   * This policy with {@code variables} injected, in their iteration order, replacing any before.
   */
  public EnvPolicy withInject(Map<String, String> variables) {
    return new EnvPolicy(allow, variables);
  }

  /** Whether the child inherits the whole host environment (before injection). */
  public boolean inheritsAll() {
    return allow == null;
  }

  /**
   * The child's environment as {@code NAME=VALUE} entries, built from the host's entries in their
   * order: host entries the allow filter keeps (all of them when {@code allow} is null; entries
   * without a name are skipped by a filter), minus those an injected name replaces, then the
   * injected entries in their order.
   */
  public List<String> apply(List<String> hostEnvironment) {
    List<String> out = new ArrayList<>(hostEnvironment.size() + inject.size());
    Set<String> allowed = allow == null ? null : new HashSet<>(allow);
    for (String entry : hostEnvironment) {
      int eq = entry.indexOf('=');
      String name = eq < 0 ? entry : entry.substring(0, eq);
      if (allowed != null && (eq <= 0 || !allowed.contains(name))) {
        continue;
      }
      if (inject.containsKey(name)) {
        continue;
      }
      out.add(entry);
    }
    inject.forEach((k, v) -> out.add(k + "=" + v));
    return out;
  }
}
