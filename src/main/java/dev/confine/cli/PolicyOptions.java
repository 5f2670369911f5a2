package dev.confine.cli;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.MitmPolicy;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import java.io.InputStream;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;

/**
 * The policy options that {@code exec} and {@code shell} share: the root and working directory, the
 * environment, the timeout, the network mode and the resource caps.
 */
final class PolicyOptions {
  private static final String A_NAME = "a variable name ([A-Za-z_][A-Za-z0-9_]*)";

  @Option(
      names = "--root",
      paramLabel = "DIR",
      description = "The directory CMD is confined to (default: the current directory).")
  private String root;

  @Option(
      names = {"-C", "--workdir"},
      paramLabel = "DIR",
      description = "The working directory: relative to the root, or absolute inside it.")
  private String workDir;

  @Option(
      names = "--timeout",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "Kill CMD's whole process tree after DURATION (Go syntax: 10s, 1m30s, 250ms, 1.5h;"
              + " 0 = none, the default).")
  private Duration timeout;

  @Option(
      names = "--clear-env",
      description = "Inherit no environment variables (only --env-allow and --env ones).")
  private boolean clearEnv;

  @Option(
      names = "--env-allow",
      paramLabel = "NAME",
      description = "Inherit only these variables (repeatable).")
  private List<String> envAllow;

  @Option(
      names = "--env",
      paramLabel = "NAME=VALUE",
      description = "Set a variable in CMD's environment (repeatable; the last one wins).")
  private List<String> envSet;

  @Option(
      names = "--max-output",
      paramLabel = "SIZE",
      converter = SizeConverter.class,
      description =
          "Pass on at most SIZE bytes of each of stdout and stderr, dropping the rest (1024, 64k,"
              + " 1.5m, 2GiB, 10mb; default: the backend's, 10 MiB); with --json, which holds"
              + " them, more than an eighth of the JVM's maximum heap is refused.")
  private long maxOutput;

  @Option(
      names = "--memory",
      paramLabel = "SIZE",
      converter = SizeConverter.class,
      description = "Cap the memory of CMD's process tree.")
  private long memory;

  @Option(
      names = "--cpu-millicores",
      paramLabel = "N",
      converter = CountConverter.class,
      description =
          "A CPU-time budget of N thousandths of a core over the timeout (needs --timeout): the"
              + " tree runs at full speed and is killed once it has used timeout x N / 1000.")
  private int cpuMillicores;

  @Option(
      names = "--cpu-throttle",
      paramLabel = "N",
      converter = CountConverter.class,
      description =
          "Throttle CMD's tree to N thousandths of one core for as long as it runs (a cgroup CPU"
              + " controller; refused where there is none).")
  private int cpuThrottle;

  @Option(
      names = "--net",
      paramLabel = "MODE",
      converter = NetConverter.class,
      description =
          "The network CMD may reach: default (the host's), deny (none), allow-list (only what an"
              + " --allow-host allows, through the egress proxy) or proxy (what no --deny-host"
              + " denies, through --upstream if given); all but default need --confined.")
  private NetMode net = NetMode.DEFAULT;

  @Option(
      names = "--allow-host",
      paramLabel = "HOST[:PORT]",
      converter = NetRuleArgs.Allow.class,
      description =
          "With --net allow-list or proxy: allow HOST (a name and its subdomains, *.name, an IP or"
              + " a CIDR) on PORT, or on any port without one. Loopback and private addresses need"
              + " an IP or CIDR rule.")
  private List<NetRule> allowHosts = new ArrayList<>();

  @Option(
      names = "--deny-host",
      paramLabel = "HOST[:PORT]",
      converter = NetRuleArgs.Deny.class,
      description = "With --net allow-list or proxy: deny HOST (a deny always wins).")
  private List<NetRule> denyHosts = new ArrayList<>();

  @Option(
      names = "--upstream",
      paramLabel = "URL",
      description =
          "With --net proxy: send everything through this proxy, http://[user:pass@]host:port,"
              + " https://... or socks5://... .")
  private String upstream = "";

  @Option(
      names = "--unix-socket",
      paramLabel = "PATH",
      description =
          "With --net allow-list or proxy: CMD may connect to the unix socket at PATH (absolute;"
              + " it must exist). Rootless, the host's other unix sockets are out of reach.")
  private List<String> unixSockets = new ArrayList<>();

  @Option(
      names = "--mitm",
      description =
          "With --net allow-list or proxy: intercept CMD's TLS (the proxy's CA bundle and the"
              + " variables that make common clients trust it are given to CMD).")
  private boolean mitm;

  @Option(
      names = "--max-processes",
      paramLabel = "N",
      converter = CountConverter.class,
      description = "Cap the processes and threads of CMD's tree.")
  private int maxProcesses;

  /**
   * The absolute root directory.
   *
   * @throws ParameterException (a usage error of {@code spec}) for an invalid path
   */
  String rootDir(CommandSpec spec) {
    return rootDirOf(spec);
  }

  /**
   * The options the command line describes, with {@code stdin} (a stream, or null for none).
   *
   * @throws ParameterException (a usage error of {@code spec}) for a malformed {@code --env}, a
   *     name of {@code --env} or {@code --env-allow} that is not a variable name, or a cap the
   *     library refuses as invalid ({@code --memory} below its minimum)
   */
  ExecOptions options(CommandSpec spec, InputStream stdin) {
    return ExecOptions.builder()
        .workDir(workDir)
        .stdinStream(stdin)
        .timeout(timeout)
        .env(envPolicy(spec, injectedEnv(spec)))
        .net(netPolicy(spec))
        .resources(resources(spec))
        .build();
  }

  /**
   * The network policy of {@code --net} and its rules.
   *
   * @throws ParameterException for rules without a mode that takes them, or {@code --upstream}
   *     without {@code --net proxy}
   */
  private NetPolicy netPolicy(CommandSpec spec) {
    boolean rules = !allowHosts.isEmpty() || !denyHosts.isEmpty();
    if (rules && net != NetMode.ALLOW_LIST && net != NetMode.PROXY) {
      throw new ParameterException(
          spec.commandLine(),
          (allowHosts.isEmpty() ? "--deny-host" : "--allow-host")
              + " needs --net allow-list or --net proxy");
    }
    if (!upstream.isEmpty() && net != NetMode.PROXY) {
      throw new ParameterException(spec.commandLine(), "--upstream needs --net proxy");
    }
    boolean proxied = net == NetMode.ALLOW_LIST || net == NetMode.PROXY;
    if (!proxied && (!unixSockets.isEmpty() || mitm)) {
      throw new ParameterException(
          spec.commandLine(),
          (mitm ? "--mitm" : "--unix-socket") + " needs --net allow-list or --net proxy");
    }
    for (String socket : unixSockets) {
      if (socket.isEmpty() || !socket.startsWith("/")) {
        throw new ParameterException(
            spec.commandLine(),
            "--unix-socket " + JsonString.quote(socket) + " is not an absolute path");
      }
    }
    List<NetRule> all = new ArrayList<>(denyHosts);
    all.addAll(allowHosts);
    return switch (net) {
      case DEFAULT -> NetPolicy.defaults();
      case DENY_ALL -> NetPolicy.denyAll();
      case ALLOW_LIST, PROXY ->
          NetPolicy.builder()
              .mode(net)
              .rules(all)
              .proxy(upstream)
              .unixSockets(unixSockets)
              .mitm(mitm ? MitmPolicy.all() : null)
              .build();
    };
  }

  private ResourceLimits resources(CommandSpec spec) {
    try {
      return ResourceLimits.builder()
          .maxOutputBytes(maxOutput)
          .memoryBytes(memory)
          .cpuMillicores(cpuMillicores)
          .cpuThrottleMillicores(cpuThrottle)
          .maxProcesses(maxProcesses)
          .build();
    } catch (SandboxException e) {
      // A value no runner could take (a memory cap no program starts in): a usage error.
      throw usage(
          spec, e.getMessage().replaceFirst("^sandbox: resources\\.memoryBytes", "--memory"));
    }
  }

  /** The {@code --max-output} size, 0 when not given. */
  long maxOutput() {
    return maxOutput;
  }

  private EnvPolicy envPolicy(CommandSpec spec, Map<String, String> inject) {
    List<String> allow;
    if (envAllow != null) {
      for (String name : envAllow) {
        if (!EnvPolicy.isValidName(name)) {
          throw usage(spec, "--env-allow " + JsonString.quote(name) + " is not " + A_NAME);
        }
      }
      allow = envAllow; // with or without --clear-env: exactly the list
    } else if (clearEnv) {
      allow = List.of();
    } else {
      allow = null; // inherit everything
    }
    return new EnvPolicy(allow, inject);
  }

  private String rootDirOf(CommandSpec spec) {
    try {
      return (root == null ? Path.of("") : Path.of(root)).toAbsolutePath().toString();
    } catch (InvalidPathException e) {
      throw usage(spec, "invalid --root " + JsonString.quote(root) + ": " + e.getReason());
    }
  }

  private Map<String, String> injectedEnv(CommandSpec spec) {
    Map<String, String> inject = new LinkedHashMap<>();
    if (envSet == null) {
      return inject;
    }
    for (String assignment : envSet) {
      int eq = assignment.indexOf('=');
      if (eq < 0) {
        throw usage(
            spec, "--env " + JsonString.quote(assignment) + " is not of the form NAME=VALUE");
      }
      if (eq == 0) {
        throw usage(spec, "--env " + JsonString.quote(assignment) + " has an empty NAME");
      }
      String name = assignment.substring(0, eq);
      if (!EnvPolicy.isValidName(name)) {
        throw usage(
            spec,
            "--env "
                + JsonString.quote(assignment)
                + ": NAME "
                + JsonString.quote(name)
                + " is not "
                + A_NAME);
      }
      inject.remove(name); // the last assignment wins, and comes last in the child's environment
      inject.put(name, assignment.substring(eq + 1));
    }
    return inject;
  }

  private static ParameterException usage(CommandSpec spec, String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  /** Converts {@code --timeout} values with {@link GoDuration}. */
  static final class DurationConverter implements ITypeConverter<Duration> {
    /** The parsed duration; picocli reports the message of a bad one as a usage error. */
    @Override
    public Duration convert(String value) {
      try {
        return GoDuration.parse(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /** Converts size values with {@link ByteSize}. */
  static final class SizeConverter implements ITypeConverter<Long> {
    /** The parsed size in bytes; picocli reports the message of a bad one as a usage error. */
    @Override
    public Long convert(String value) {
      try {
        return ByteSize.parse(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /** Converts counts: whole numbers from 0 up to {@link Integer#MAX_VALUE}. */
  static final class CountConverter implements ITypeConverter<Integer> {
    /** The parsed count; picocli reports the message of a bad one as a usage error. */
    @Override
    public Integer convert(String value) {
      int n;
      try {
        n = Integer.parseInt(value);
      } catch (NumberFormatException e) {
        throw new TypeConversionException(
            JsonString.quote(value) + " is not a whole number up to " + Integer.MAX_VALUE);
      }
      if (n < 0) {
        throw new TypeConversionException(JsonString.quote(value) + " must not be negative");
      }
      return n;
    }
  }

  /** Parses default, deny, allow-list and proxy. */
  static final class NetConverter implements ITypeConverter<NetMode> {
    @Override
    public NetMode convert(String value) {
      return switch (value) {
        case "default" -> NetMode.DEFAULT;
        case "deny" -> NetMode.DENY_ALL;
        case "allow-list", "allow_list" -> NetMode.ALLOW_LIST;
        case "proxy" -> NetMode.PROXY;
        default ->
            throw new TypeConversionException(
                "unknown network mode \"" + value + "\" (use default, deny, allow-list or proxy)");
      };
    }
  }
}
