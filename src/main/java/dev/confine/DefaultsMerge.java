package dev.confine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The merge behind {@link Runners#withDefaults}: defaults are a ceiling that a call may narrow but
 * never widen. This differs from the seed, which throws the caller's env allow-list, network and
 * resources away and so silently loosens a caller who asks for less.
 */
final class DefaultsMerge {
  private DefaultsMerge() {}

  /**
   * The merged options. Stdin is the call's when it has any (bytes or a stream, the stream passed
   * on as it is: it cannot be copied), else the defaults' bytes; defaults never hold a stream
   * ({@link #requireNoStream}).
   */
  static ExecOptions merge(ExecOptions defaults, ExecOptions call) {
    ExecOptions stdinFrom = call.hasStdin() ? call : defaults;
    return new ExecOptions(
        call.workDir().isEmpty() ? defaults.workDir() : call.workDir(),
        stdinFrom.stdin(),
        smallerPositive(defaults.timeout(), call.timeout()),
        env(defaults.env(), call.env()),
        net(defaults.net(), call.net()),
        resources(defaults.resources(), call.resources()),
        stdinFrom.stdinStream());
  }

  /**
   * Checks that {@code defaults} hold no stdin stream: defaults apply to every call, and a stream
   * can be read by one exec only.
   *
   * @throws SandboxException VALIDATION when they do
   */
  static ExecOptions requireNoStream(ExecOptions defaults) {
    if (defaults.stdinStream() != null) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "default options cannot hold a stdin stream (every call would share one"
              + " stream, which only one exec can read); give it per call");
    }
    return defaults;
  }

  static Duration smallerPositive(Duration a, Duration b) {
    if (a.isZero()) {
      return b;
    }
    if (b.isZero()) {
      return a;
    }
    return a.compareTo(b) <= 0 ? a : b;
  }

  static long smallerPositive(long a, long b) {
    if (a == 0) {
      return b;
    }
    if (b == 0) {
      return a;
    }
    return Math.min(a, b);
  }

  /**
   * Allow-lists intersect (a null list is "everything"); injected variables are the defaults'
   * overlaid by the call's.
   */
  static EnvPolicy env(EnvPolicy defaults, EnvPolicy call) {
    List<String> allow;
    if (defaults.allow() == null) {
      allow = call.allow();
    } else if (call.allow() == null) {
      allow = defaults.allow();
    } else {
      Set<String> wanted = new HashSet<>(call.allow());
      allow = new ArrayList<>();
      for (String name : defaults.allow()) {
        if (wanted.contains(name)) {
          allow.add(name);
        }
      }
    }
    Map<String, String> inject = new LinkedHashMap<>(defaults.inject());
    inject.putAll(call.inject());
    return new EnvPolicy(allow, inject);
  }

  /**
   * With {@link NetMode#DEFAULT} defaults (host networking, the widest posture) the call's policy
   * stands. Otherwise the defaults stand, narrowed by the call: its DENY_ALL replaces any mode, its
   * deny rules are added, and a non-empty unix-socket list intersects the defaults'. The call's
   * allow rules, allow hosts, proxy and MITM settings are ignored: they could only widen.
   */
  static NetPolicy net(NetPolicy defaults, NetPolicy call) {
    if (defaults.mode() == NetMode.DEFAULT) {
      return call;
    }
    NetMode mode = call.mode() == NetMode.DENY_ALL ? NetMode.DENY_ALL : defaults.mode();
    List<NetRule> rules = new ArrayList<>(defaults.rules());
    for (NetRule r : call.rules()) {
      if (r != null && r.action() == NetAction.DENY) {
        rules.add(r);
      }
    }
    List<String> sockets = defaults.unixSockets();
    if (!call.unixSockets().isEmpty()) {
      Set<String> wanted = new HashSet<>(call.unixSockets());
      sockets = new ArrayList<>();
      for (String s : defaults.unixSockets()) {
        if (wanted.contains(s)) {
          sockets.add(s);
        }
      }
    }
    return defaults.toBuilder().mode(mode).rules(rules).unixSockets(sockets).build();
  }

  /** Every cap takes the smaller positive value; zero on one side means "no cap from that side". */
  static ResourceLimits resources(ResourceLimits defaults, ResourceLimits call) {
    return new ResourceLimits(
        (int) smallerPositive(defaults.cpuMillicores(), call.cpuMillicores()),
        smallerPositive(defaults.memoryBytes(), call.memoryBytes()),
        smallerPositive(defaults.diskBytes(), call.diskBytes()),
        smallerPositive(defaults.maxOutputBytes(), call.maxOutputBytes()),
        (int) smallerPositive(defaults.maxProcesses(), call.maxProcesses()),
        (int) smallerPositive(defaults.cpuThrottleMillicores(), call.cpuThrottleMillicores()));
  }
}
