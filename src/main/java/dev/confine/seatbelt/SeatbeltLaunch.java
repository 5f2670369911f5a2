package dev.confine.seatbelt;

import dev.confine.EnvPolicy;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How the seatbelt backend would start a child, as pure functions: the argument vector for {@code
 * sandbox-exec} and the child's environment (seed §11). Nothing here runs anything; see {@link
 * SeatbeltRunner} for why nothing does.
 */
final class SeatbeltLaunch {
  /**
   * The proxy variables that ALLOW_LIST and PROXY force onto the enforcement proxy, so that every
   * proxy-aware client goes through it (the seed's six, in its order).
   */
  static final List<String> PROXY_VARIABLES =
      List.of("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy");

  /** The variables that ALLOW_LIST and PROXY set empty, so that no client opts out of the proxy. */
  static final List<String> NO_PROXY_VARIABLES = List.of("NO_PROXY", "no_proxy");

  private SeatbeltLaunch() {}

  /**
   * {@code binary -p profile command args...}: what the seed passes to {@code exec.Command}, the
   * binary being the child's {@code argv[0]}.
   *
   * @throws SandboxException VALIDATION when {@code command} is empty, or begins with {@code -}:
   *     {@code sandbox-exec} would read it as one of its own options (the seed passes it on as it
   *     is); name such a program by a path such as {@code ./-x}
   */
  static List<String> argv(String binary, String profile, String command, List<String> args) {
    Objects.requireNonNull(binary, "binary");
    Objects.requireNonNull(profile, "profile");
    if (command == null || command.isEmpty()) {
      throw SandboxException.of(Kind.VALIDATION, "seatbelt: empty command");
    }
    if (command.startsWith("-")) {
      throw SandboxException.of(
          Kind.VALIDATION,
          "seatbelt: command "
              + SandboxException.quote(command)
              + " begins with '-', which sandbox-exec would read as an option; name it by a"
              + " path (./"
              + command
              + ")");
    }
    List<String> argv = new ArrayList<>(4 + (args == null ? 0 : args.size()));
    argv.add(binary);
    argv.add("-p");
    argv.add(profile);
    argv.add(command);
    if (args != null) {
      for (String a : args) {
        argv.add(Objects.requireNonNull(a, "argument"));
      }
    }
    return List.copyOf(argv);
  }

  /**
   * The child's environment as {@code NAME=VALUE} entries: {@code policy} applied to the host's
   * entries ({@link EnvPolicy#apply}: the allow filter, then the injected variables); then, when
   * {@code proxyPort} is positive (ALLOW_LIST and PROXY), the six {@link #PROXY_VARIABLES} forced
   * to {@code http://127.0.0.1:<port>} and {@code NO_PROXY} and {@code no_proxy} set empty,
   * replacing any host or injected value (the sandbox's policy wins over the caller's); then, when
   * {@code caBundle} is not null (MITM), {@code SSL_CERT_FILE} set to it, likewise. Forced
   * variables come last, in that order; the rest keep {@link EnvPolicy#apply}'s order.
   *
   * @param proxyPort the enforcement proxy's loopback port, or 0 for none
   * @param caBundle the CA bundle the child is to trust, or null for none
   * @throws IllegalArgumentException when {@code proxyPort} is negative or above 65535
   */
  static List<String> environment(
      EnvPolicy policy, List<String> hostEnvironment, int proxyPort, String caBundle) {
    Objects.requireNonNull(policy, "policy");
    if (proxyPort < 0 || proxyPort > 65535) {
      throw new IllegalArgumentException("proxy port " + proxyPort + " out of range");
    }
    Map<String, String> forced = new LinkedHashMap<>();
    if (proxyPort > 0) {
      String url = "http://127.0.0.1:" + proxyPort;
      PROXY_VARIABLES.forEach(name -> forced.put(name, url));
      NO_PROXY_VARIABLES.forEach(name -> forced.put(name, ""));
    }
    if (caBundle != null) {
      forced.put("SSL_CERT_FILE", caBundle);
    }
    List<String> base = policy.apply(hostEnvironment);
    List<String> out = new ArrayList<>(base.size() + forced.size());
    for (String entry : base) {
      int eq = entry.indexOf('=');
      String name = eq < 0 ? entry : entry.substring(0, eq);
      if (!forced.containsKey(name)) {
        out.add(entry);
      }
    }
    forced.forEach((name, value) -> out.add(name + "=" + value));
    return List.copyOf(out);
  }
}
