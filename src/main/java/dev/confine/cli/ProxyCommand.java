package dev.confine.cli;

import dev.confine.MitmPolicy;
import dev.confine.NetMode;
import dev.confine.NetPolicy;
import dev.confine.NetRule;
import dev.confine.SandboxException;
import dev.confine.net.EgressProxy;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code confine proxy}: the egress proxy on its own, for any sandbox or a person. Prints the
 * variables that send clients through it ({@code NAME=value} lines) on stdout, then serves until it
 * is interrupted or terminated.
 */
@Command(
    name = "proxy",
    mixinStandardHelpOptions = true,
    versionProvider = Version.class,
    description =
        "Runs the egress proxy (HTTP forwarding, CONNECT and SOCKS5 on one listener) enforcing the"
            + " rules given, until interrupted. Prints HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and their"
            + " lower-case forms as NAME=value lines on stdout; clients must present the token they"
            + " carry (on a unix socket: none).")
final class ProxyCommand implements Callable<Integer> {
  private final PrintStream out;
  private final PrintStream err;
  private final CountDownLatch stop;

  @Spec private CommandSpec spec;

  @Option(
      names = "--listen",
      paramLabel = "ADDR",
      description =
          "127.0.0.1:PORT (PORT 0: one the kernel picks; the default) or 'unix' (a private"
              + " socket, its path printed on stderr).")
  private String listen = "127.0.0.1:0";

  @Option(
      names = "--allow-host",
      paramLabel = "HOST[:PORT]",
      converter = NetRuleArgs.Allow.class,
      description =
          "Allow HOST (a name and its subdomains, *.name, an IP or a CIDR) on PORT, or on any port"
              + " without one.")
  private List<NetRule> allowHosts = new ArrayList<>();

  @Option(
      names = "--deny-host",
      paramLabel = "HOST[:PORT]",
      converter = NetRuleArgs.Deny.class,
      description = "Deny HOST on PORT, or on any port without one.")
  private List<NetRule> denyHosts = new ArrayList<>();

  @Option(
      names = "--rule",
      paramLabel = "RULE",
      converter = NetRuleArgs.Rule.class,
      description = "'allow HOST[:PORT]' or 'deny HOST[:PORT]' ([v6]:PORT for IPv6 with a port).")
  private List<NetRule> rules = new ArrayList<>();

  @Option(
      names = "--upstream",
      paramLabel = "URL",
      description =
          "Chain to this proxy: http://[user:pass@]host:port, https://... (TLS to the proxy) or"
              + " socks5://... .")
  private String upstream = "";

  @Option(
      names = "--outbound-ca",
      paramLabel = "FILE",
      description =
          "Trust the CA certificates in FILE (PEM) on the proxy's own TLS connections (to an"
              + " https:// upstream, and with --mitm to the destinations) instead of the JDK's"
              + " trust store.")
  private Path outboundCa;

  @Option(
      names = "--mode",
      paramLabel = "MODE",
      converter = ModeConverter.class,
      description =
          "allow_list (deny what no rule allows; the default without --upstream) or proxy (allow"
              + " what no rule denies; the default with --upstream).")
  private NetMode mode;

  @Option(
      names = "--mitm",
      description =
          "Intercept TLS in CONNECT and SOCKS5 tunnels: a CA made now (valid 24 h), leaves per"
              + " host, a CA bundle written now and removed on exit (its path on stderr, its"
              + " variables with the others on stdout).")
  private boolean mitm;

  @Option(
      names = "--mitm-host",
      paramLabel = "HOST",
      description = "Intercept only HOST (same forms as --allow-host); repeatable. Needs --mitm.")
  private List<String> mitmHosts = new ArrayList<>();

  @Option(
      names = "--mitm-exclude",
      paramLabel = "HOST",
      description = "Never intercept HOST (a raw tunnel); wins over --mitm-host. Needs --mitm.")
  private List<String> mitmExclude = new ArrayList<>();

  @Option(
      names = "--mitm-inspect-bodies",
      description = "Show request and response bodies to hooks (the library's). Needs --mitm.")
  private boolean mitmInspectBodies;

  @Option(
      names = "--mitm-max-body",
      paramLabel = "BYTES",
      converter = PolicyOptions.SizeConverter.class,
      description = "The most body bytes shown to hooks (64k, 1m; default 64 KiB). Needs --mitm.")
  private Long mitmMaxBody;

  @Option(
      names = "--audit",
      paramLabel = "FILE",
      description = "Append one JSON line per decision and per closed connection ('-': stdout).")
  private String audit;

  ProxyCommand(PrintStream out, PrintStream err) {
    this(out, err, new CountDownLatch(1));
  }

  /** A command that serves until {@code stop} is counted down (tests) or the JVM ends. */
  ProxyCommand(PrintStream out, PrintStream err, CountDownLatch stop) {
    this.out = out;
    this.err = err;
    this.stop = stop;
  }

  @Override
  public Integer call() throws IOException {
    NetPolicy policy = policy();
    EgressProxy.Builder builder = EgressProxy.builder(policy);
    if (listen.equals("unix")) {
      builder.listenOnUnixSocket();
    } else {
      builder.listenOnLoopback(loopbackPort(listen));
    }
    if (outboundCa != null) {
      try {
        builder.outboundRoots(certificates(outboundCa));
      } catch (IOException | CertificateException e) {
        err.println("confine: --outbound-ca " + outboundCa + ": " + e.getMessage());
        err.flush();
        return ExitStatus.USAGE;
      }
    }
    AuditLines sink =
        audit == null
            ? null
            : new AuditLines(audit.equals("-") ? out : AuditLines.append(Path.of(audit)));
    if (sink != null) {
      builder.audit(sink);
    }
    EgressProxy proxy;
    try {
      proxy = builder.start();
    } catch (SandboxException e) {
      err.println("confine: " + e.getMessage());
      err.flush();
      return e.kind() == SandboxException.Kind.VALIDATION
          ? ExitStatus.USAGE
          : ExitStatus.CONFINE_FAILED;
    }
    Thread closer = new Thread(proxy::close, "confine-proxy-close");
    Runtime.getRuntime().addShutdownHook(closer);
    try (proxy) {
      for (Map.Entry<String, String> e : new java.util.TreeMap<>(proxy.environment()).entrySet()) {
        out.println(e.getKey() + "=" + e.getValue());
      }
      out.flush();
      proxy.socketPath().ifPresent(p -> err.println("confine: egress proxy listening on " + p));
      proxy
          .caBundle()
          .ifPresent(
              b -> err.println("confine: intercepting TLS; clients must trust the CA bundle " + b));
      proxy
          .address()
          .ifPresent(
              a -> err.println("confine: egress proxy listening on 127.0.0.1:" + a.getPort()));
      err.flush();
      stop.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(closer);
      } catch (IllegalStateException e) {
        // The JVM is shutting down: the hook closes the proxy.
      }
    }
    return 0;
  }

  private NetPolicy policy() {
    List<NetRule> all = new ArrayList<>(rules);
    all.addAll(denyHosts);
    all.addAll(allowHosts);
    NetMode m = mode != null ? mode : upstream.isEmpty() ? NetMode.ALLOW_LIST : NetMode.PROXY;
    return NetPolicy.builder().mode(m).rules(all).proxy(upstream).mitm(mitmPolicy()).build();
  }

  private MitmPolicy mitmPolicy() {
    boolean tuned =
        !mitmHosts.isEmpty() || !mitmExclude.isEmpty() || mitmInspectBodies || mitmMaxBody != null;
    if (!mitm) {
      if (tuned) {
        throw new picocli.CommandLine.ParameterException(
            spec.commandLine(),
            "--mitm-host, --mitm-exclude, --mitm-inspect-bodies and --mitm-max-body need --mitm");
      }
      return null;
    }
    return new MitmPolicy(
        true, mitmInspectBodies, mitmMaxBody == null ? 0 : mitmMaxBody, mitmHosts, mitmExclude);
  }

  /** The certificates in a PEM (or DER) file; at least one. */
  private static List<X509Certificate> certificates(Path file)
      throws IOException, CertificateException {
    try (InputStream in = Files.newInputStream(file)) {
      List<X509Certificate> found = new ArrayList<>();
      for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        found.add((X509Certificate) c);
      }
      if (found.isEmpty()) {
        throw new CertificateException("no certificate in it");
      }
      return found;
    }
  }

  private int loopbackPort(String address) {
    String prefix = "127.0.0.1:";
    String port = address.startsWith(prefix) ? address.substring(prefix.length()) : "";
    if (port.isEmpty()
        || port.length() > 5
        || !port.chars().allMatch(Character::isDigit)
        || Integer.parseInt(port) > 65535) {
      throw new picocli.CommandLine.ParameterException(
          spec.commandLine(),
          "--listen takes 127.0.0.1:PORT or unix, not "
              + JsonString.quote(address)
              + " (the proxy never listens beyond loopback)");
    }
    return Integer.parseInt(port);
  }

  /** {@code allow_list} or {@code proxy}. */
  static final class ModeConverter implements ITypeConverter<NetMode> {
    @Override
    public NetMode convert(String value) {
      return switch (value.toLowerCase(Locale.ROOT).replace('-', '_')) {
        case "allow_list" -> NetMode.ALLOW_LIST;
        case "proxy" -> NetMode.PROXY;
        default ->
            throw new TypeConversionException(
                "the proxy's mode is allow_list or proxy, not " + JsonString.quote(value));
      };
    }
  }
}
