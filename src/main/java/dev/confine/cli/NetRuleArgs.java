package dev.confine.cli;

import dev.confine.NetAction;
import dev.confine.NetRule;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The command line's network rules: {@code HOST[:PORT]} ({@code [v6]:PORT} for an IPv6 address with
 * a port; no port: any) for {@code --allow-host} and {@code --deny-host}, and {@code allow
 * HOST[:PORT]} or {@code deny HOST[:PORT]} for {@code --rule}. The host's own syntax is checked by
 * the proxy when it starts.
 */
final class NetRuleArgs {
  private NetRuleArgs() {}

  /** {@code --allow-host HOST[:PORT]}. */
  static final class Allow implements ITypeConverter<NetRule> {
    @Override
    public NetRule convert(String value) {
      return rule(NetAction.ALLOW, value, value);
    }
  }

  /** {@code --deny-host HOST[:PORT]}. */
  static final class Deny implements ITypeConverter<NetRule> {
    @Override
    public NetRule convert(String value) {
      return rule(NetAction.DENY, value, value);
    }
  }

  /** {@code --rule 'allow HOST[:PORT]'} or {@code --rule 'deny HOST[:PORT]'}. */
  static final class Rule implements ITypeConverter<NetRule> {
    @Override
    public NetRule convert(String value) {
      String[] words = value.strip().split("\\s+");
      if (words.length != 2) {
        throw new TypeConversionException(
            "a rule is 'allow HOST[:PORT]' or 'deny HOST[:PORT]', not " + JsonString.quote(value));
      }
      NetAction action =
          switch (words[0].toLowerCase(Locale.ROOT)) {
            case "allow" -> NetAction.ALLOW;
            case "deny" -> NetAction.DENY;
            default ->
                throw new TypeConversionException(
                    "a rule starts with allow or deny, not " + JsonString.quote(words[0]));
          };
      return rule(action, words[1], value);
    }
  }

  /** {@code target} ({@code HOST[:PORT]}) as a rule; {@code arg} is named in errors. */
  static NetRule rule(NetAction action, String target, String arg) {
    String host = target;
    int port = 0;
    int colon = target.lastIndexOf(':');
    if (target.startsWith("[")) {
      int close = target.indexOf(']');
      if (close < 0) {
        throw new TypeConversionException("unclosed '[' in " + JsonString.quote(arg));
      }
      host = target.substring(1, close);
      port = close + 1 < target.length() ? port(target.substring(close + 1), arg) : 0;
    } else if (colon >= 0 && target.indexOf(':') == colon) {
      host = target.substring(0, colon);
      port = port(target.substring(colon), arg);
    }
    if (host.isBlank()) {
      throw new TypeConversionException("no host in " + JsonString.quote(arg));
    }
    return new NetRule(action, host, port);
  }

  private static int port(String colonPort, String arg) {
    String p = colonPort.startsWith(":") ? colonPort.substring(1) : "";
    if (p.isEmpty()
        || p.length() > 5
        || !p.chars().allMatch(Character::isDigit)
        || Integer.parseInt(p) < 1
        || Integer.parseInt(p) > 65535) {
      throw new TypeConversionException("invalid port in " + JsonString.quote(arg));
    }
    return Integer.parseInt(p);
  }
}
