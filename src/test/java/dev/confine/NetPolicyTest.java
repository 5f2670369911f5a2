package dev.confine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.SandboxException.Kind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class NetPolicyTest {

  private static NetPolicy withProxy(String url) {
    return NetPolicy.builder().mode(NetMode.PROXY).proxy(url).build();
  }

  private static NetPolicy withRules(NetRule... rules) {
    return NetPolicy.builder().mode(NetMode.ALLOW_LIST).rules(Arrays.asList(rules)).build();
  }

  private static NetPolicy withSockets(String... paths) {
    return NetPolicy.builder().unixSockets(Arrays.asList(paths)).build();
  }

  private static NetPolicy withMitm(MitmPolicy mitm) {
    return NetPolicy.builder().mode(NetMode.PROXY).proxy("http://p:3128").mitm(mitm).build();
  }

  private static AbstractThrowableAssert<?, ? extends Throwable> assertInvalid(NetPolicy policy) {
    return assertThatThrownBy(policy::validate)
        .isInstanceOf(SandboxException.class)
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION))
        .hasMessageStartingWith("sandbox: ");
  }

  // ---- NetMode, NetAction, NetRule ----

  @ParameterizedTest
  @CsvSource({"0, DEFAULT", "1, DENY_ALL", "2, ALLOW_LIST", "3, PROXY"})
  void netModeCodesAreTheSeeds(int code, NetMode mode) {
    assertThat(NetMode.ofCode(code)).isEqualTo(mode);
    assertThat(mode.code()).isEqualTo(code);
  }

  @ParameterizedTest
  @ValueSource(ints = {7, 4, -1, Integer.MAX_VALUE})
  void unknownNetModeCodeIsValidation(int code) {
    assertThatThrownBy(() -> NetMode.ofCode(code))
        .isInstanceOf(SandboxException.class)
        .hasMessage("sandbox: unknown net mode " + code)
        .satisfies(e -> assertThat(((SandboxException) e).kind()).isEqualTo(Kind.VALIDATION));
  }

  @Test
  void unknownNetModeSevenHasTheSeedMessage() {
    assertThatThrownBy(() -> NetMode.ofCode(7)).hasMessage("sandbox: unknown net mode 7");
  }

  @Test
  void netActionStringsAndCodes() {
    assertThat(NetAction.DENY).hasToString("deny");
    assertThat(NetAction.ALLOW).hasToString("allow");
    assertThat(NetAction.DENY.code()).isZero();
    assertThat(NetAction.ALLOW.code()).isEqualTo(1);
  }

  @Test
  void netRuleToStringIsTheSeedDescription() {
    assertThat(NetRule.allow("example.com")).hasToString("allow example.com");
    assertThat(NetRule.deny("x", 443)).hasToString("deny x:443");
    assertThat(NetRule.allow("h", 8080)).hasToString("allow h:8080");
    assertThat(NetRule.deny("10.0.0.0/8")).hasToString("deny 10.0.0.0/8");
  }

  @Test
  void netRuleFactoriesSetActionHostAndPort() {
    assertThat(NetRule.allow("a")).isEqualTo(new NetRule(NetAction.ALLOW, "a", 0));
    assertThat(NetRule.allow("a", 1)).isEqualTo(new NetRule(NetAction.ALLOW, "a", 1));
    assertThat(NetRule.deny("b")).isEqualTo(new NetRule(NetAction.DENY, "b", 0));
    assertThat(NetRule.deny("b", 2)).isEqualTo(new NetRule(NetAction.DENY, "b", 2));
  }

  // ---- construction ----

  @Test
  void nullComponentsDefaultAtConstruction() {
    NetPolicy p = new NetPolicy(null, null, null, null, null, null);

    assertThat(p.mode()).isEqualTo(NetMode.DEFAULT);
    assertThat(p.allowHosts()).isNotNull().isEmpty();
    assertThat(p.rules()).isNotNull().isEmpty();
    assertThat(p.proxy()).isEmpty();
    assertThat(p.unixSockets()).isNotNull().isEmpty();
    assertThat(p.mitm()).isNull();
    assertThat(p).isEqualTo(NetPolicy.defaults());
    assertThat(p.validate()).isSameAs(p);
  }

  @Test
  void mitmNullListsBecomeEmpty() {
    MitmPolicy m = new MitmPolicy(true, true, 5, null, null);

    assertThat(m.hosts()).isNotNull().isEmpty();
    assertThat(m.excludeHosts()).isNotNull().isEmpty();
    assertThat(MitmPolicy.all()).isEqualTo(new MitmPolicy(true, false, 0, List.of(), List.of()));
  }

  @Test
  void listsAreCopiedAndUnmodifiable() {
    List<NetRule> rules = new ArrayList<>(List.of(NetRule.allow("a")));
    List<String> hosts = new ArrayList<>(List.of("h"));
    List<String> sockets = new ArrayList<>(List.of("/s"));
    NetPolicy p = new NetPolicy(NetMode.ALLOW_LIST, hosts, rules, "", sockets, null);
    rules.add(NetRule.deny("b"));
    hosts.clear();
    sockets.add("/t");

    assertThat(p.rules()).containsExactly(NetRule.allow("a"));
    assertThat(p.allowHosts()).containsExactly("h");
    assertThat(p.unixSockets()).containsExactly("/s");
    assertThatThrownBy(() -> p.rules().add(NetRule.allow("c")))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> p.allowHosts().add("x"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void factories() {
    assertThat(NetPolicy.defaults().mode()).isEqualTo(NetMode.DEFAULT);
    assertThat(NetPolicy.denyAll().mode()).isEqualTo(NetMode.DENY_ALL);
    assertThat(NetPolicy.denyAll().rules()).isEmpty();
    NetPolicy allow = NetPolicy.allowList(NetRule.allow("a"), NetRule.deny("b", 22));
    assertThat(allow.mode()).isEqualTo(NetMode.ALLOW_LIST);
    assertThat(allow.rules()).containsExactly(NetRule.allow("a"), NetRule.deny("b", 22));
    assertThat(allow.proxy()).isEmpty();
    NetPolicy proxy = NetPolicy.proxy("socks5://p:1080", NetRule.deny("evil"));
    assertThat(proxy.mode()).isEqualTo(NetMode.PROXY);
    assertThat(proxy.proxy()).isEqualTo("socks5://p:1080");
    assertThat(proxy.rules()).containsExactly(NetRule.deny("evil"));
    assertThat(proxy.validate()).isSameAs(proxy);
  }

  @Test
  void builderRoundTrip() {
    MitmPolicy mitm = new MitmPolicy(true, true, 1024, List.of("a.example"), List.of("b.example"));
    NetPolicy p =
        NetPolicy.builder()
            .mode(NetMode.PROXY)
            .allowHosts(List.of("old.example"))
            .rules(NetRule.deny("x", 443), NetRule.allow("y"))
            .proxy("http://user:pw@proxy:3128")
            .unixSockets(List.of("/run/a.sock"))
            .mitm(mitm)
            .build();

    assertThat(p.mode()).isEqualTo(NetMode.PROXY);
    assertThat(p.allowHosts()).containsExactly("old.example");
    assertThat(p.rules()).containsExactly(NetRule.deny("x", 443), NetRule.allow("y"));
    assertThat(p.proxy()).isEqualTo("http://user:pw@proxy:3128");
    assertThat(p.unixSockets()).containsExactly("/run/a.sock");
    assertThat(p.mitm()).isEqualTo(mitm);
    assertThat(p.toBuilder().build()).isEqualTo(p);
    assertThat(p.toBuilder().mode(NetMode.ALLOW_LIST).build().mode()).isEqualTo(NetMode.ALLOW_LIST);
    assertThat(p.validate()).isSameAs(p);
  }

  @Test
  void builderStartsFromDefaults() {
    assertThat(NetPolicy.builder().build()).isEqualTo(NetPolicy.defaults());
  }

  // ---- rule 2: proxy ----

  @ParameterizedTest
  @ValueSource(
      strings = {
        "http://proxy",
        "http://proxy:3128",
        "http://user:pw@proxy:3128",
        "http://user@proxy:3128",
        "http://user:@proxy",
        "http://@proxy",
        "socks5://proxy",
        "socks5://proxy:1080",
        "socks5://user:secret@proxy:1080",
        "socks5://user@proxy",
        "http://10.0.0.1:8080",
        "http://[::1]:8080",
        "http://user:pw@[::1]",
        "http://proxy_host.internal:3128",
        "socks5://under_score:1080",
        "http://proxy:3128/path?q=1",
        "https://proxy:443",
        "https://user:pw@proxy",
      })
  void validProxyUrlsPass(String url) {
    NetPolicy p = withProxy(url);

    assertThat(p.validate()).isSameAs(p);
  }

  @ParameterizedTest
  @ValueSource(strings = {"ftp://proxy", "socks4://proxy", "socks://p", "wss://proxy"})
  void otherSchemesAreRejected(String url) {
    String scheme = url.substring(0, url.indexOf(':'));

    assertInvalid(withProxy(url))
        .hasMessage("sandbox: proxy scheme \"" + scheme + "\" must be http, https or socks5");
  }

  /** Schemes are case-insensitive, as Go's url.Parse treats them. */
  @ParameterizedTest
  @ValueSource(strings = {"HTTP://proxy:3128", "HttpS://proxy", "Socks5://proxy:1080"})
  void schemesAreCaseInsensitive(String url) {
    NetPolicy p = withProxy(url);

    assertThat(p.validate()).isSameAs(p);
  }

  @Test
  void proxyWithoutSchemeIsRejectedForItsScheme() {
    assertInvalid(withProxy("//proxy:3128"))
        .hasMessage("sandbox: proxy scheme \"\" must be http, https or socks5");
    assertInvalid(withProxy("proxy:3128"))
        .hasMessage("sandbox: proxy scheme \"proxy\" must be http, https or socks5");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http://:8080", "http:proxy", "socks5://user:pw@:1080", "http://@"})
  void proxyWithoutHostIsRejected(String url) {
    assertInvalid(withProxy(url)).hasMessage("sandbox: proxy URL \"" + url + "\" has no host");
  }

  /**
   * Go parses "http://" as a URL with an empty host ("has no host"); java.net.URI refuses to parse
   * it, so Confine reports it as an invalid URL. Both are VALIDATION.
   */
  @Test
  void bareSchemeIsRejectedAsInvalidUrl() {
    assertInvalid(withProxy("http://")).hasMessageContaining("invalid proxy URL \"http://\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http://[::1", "http://pro xy:80", "http://[]:80"})
  void unparsableProxyIsRejected(String url) {
    assertInvalid(withProxy(url))
        .hasMessageStartingWith("sandbox: invalid proxy URL \"" + url + "\"")
        .hasCauseInstanceOf(java.net.URISyntaxException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"http://:pw@proxy:3128", "socks5://:secret@proxy"})
  void passwordWithoutUsernameIsRejected(String url) {
    assertInvalid(withProxy(url))
        .hasMessage("sandbox: proxy URL \"" + url + "\" has a password but no username");
  }

  @Test
  void emptyProxyIsNotChecked() {
    NetPolicy p = NetPolicy.builder().mode(NetMode.PROXY).proxy("").build();

    assertThat(p.validate()).isSameAs(p);
  }

  @ParameterizedTest
  @ValueSource(strings = {"http://proxy:abc", "http://proxy:80x", "socks5://[::1]:p"})
  void nonNumericProxyPortIsRejected(String url) {
    assertInvalid(withProxy(url))
        .hasMessageStartingWith("sandbox: invalid proxy URL \"" + url + "\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http://proxy:", "http://[::1]:3128", "http://[::1]"})
  void emptyOrNumericPortsAreAccepted(String url) {
    NetPolicy p = withProxy(url);

    assertThat(p.validate()).isSameAs(p);
  }

  // ---- rule 3: rules ----

  @Test
  void nullActionIsRejected() {
    assertInvalid(withRules(NetRule.allow("ok"), new NetRule(null, "h", 0)))
        .hasMessage("sandbox: net rule 1 has invalid action null");
  }

  @Test
  void nullRuleIsRejected() {
    assertInvalid(withRules(NetRule.allow("ok"), null)).hasMessage("sandbox: net rule 1 is null");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "  ", "\t\n"})
  void blankHostIsRejected(String host) {
    assertInvalid(withRules(NetRule.deny(host)))
        .hasMessage("sandbox: net rule 0 has an empty host");
  }

  @Test
  void nullHostIsRejected() {
    assertInvalid(withRules(NetRule.allow(null)))
        .hasMessage("sandbox: net rule 0 has an empty host");
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, 65536, Integer.MIN_VALUE, Integer.MAX_VALUE})
  void portOutOfRangeIsRejected(int port) {
    assertInvalid(withRules(NetRule.allow("a"), NetRule.allow("h", port)))
        .hasMessage("sandbox: net rule 1 port " + port + " out of range");
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 443, 65535})
  void portInRangeIsAccepted(int port) {
    NetPolicy p = withRules(NetRule.deny("h", port));

    assertThat(p.validate()).isSameAs(p);
  }

  @ParameterizedTest
  @ValueSource(strings = {"a*b.example", "*.example.com", "10.0.0.0/8", "::1", "bücher.de", "x..y"})
  void hostSyntaxIsNotCheckedByValidate(String host) {
    NetPolicy p = withRules(NetRule.allow(host));

    assertThat(p.validate()).isSameAs(p);
  }

  @Test
  void withinARuleActionIsCheckedBeforeHostBeforePort() {
    assertInvalid(withRules(new NetRule(null, " ", -1))).hasMessageContaining("invalid action");
    assertInvalid(withRules(new NetRule(NetAction.DENY, " ", -1)))
        .hasMessageContaining("empty host");
  }

  @Test
  void rulesAreCheckedInIndexOrder() {
    assertInvalid(withRules(NetRule.allow("a", 70000), NetRule.allow(" ")))
        .hasMessage("sandbox: net rule 0 port 70000 out of range");
  }

  @Test
  void allowHostsEntriesAreNotValidated() {
    NetPolicy p = NetPolicy.builder().mode(NetMode.DENY_ALL).allowHosts(List.of("", " ")).build();

    assertThat(p.validate()).isSameAs(p);
  }

  // ---- rule 4: unix sockets ----

  @ParameterizedTest
  @ValueSource(strings = {"relative.sock", "./a.sock", "", " /a.sock", "~/a.sock"})
  void unixSocketPathsMustBeAbsolute(String path) {
    assertInvalid(withSockets("/ok.sock", path))
        .hasMessage("sandbox: unix socket path \"" + path + "\" must be absolute");
  }

  @Test
  void nullUnixSocketPathIsRejected() {
    assertInvalid(withSockets((String) null))
        .hasMessage("sandbox: unix socket path null must be absolute");
  }

  @Test
  void absoluteUnixSocketPathsPass() {
    NetPolicy p = withSockets("/run/docker.sock", "/tmp/x");

    assertThat(p.validate()).isSameAs(p);
  }

  // ---- rule 5: MITM ----

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void negativeMaxBodyBytesIsRejectedEvenWhenDisabled(boolean enabled) {
    assertInvalid(withMitm(new MitmPolicy(enabled, true, -1, List.of(), List.of())))
        .hasMessage("sandbox: mitm.max_body_bytes -1 must be >= 0");
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void blankMitmHostIsRejectedWithIndexEvenWhenDisabled(boolean enabled) {
    assertInvalid(withMitm(new MitmPolicy(enabled, false, 0, List.of("a", " "), List.of())))
        .hasMessage("sandbox: mitm.hosts[1] is empty");
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void blankMitmExcludeHostIsRejectedWithIndexEvenWhenDisabled(boolean enabled) {
    assertInvalid(withMitm(new MitmPolicy(enabled, false, 0, List.of(), List.of("a", "b", ""))))
        .hasMessage("sandbox: mitm.exclude_hosts[2] is empty");
  }

  @Test
  void nullMitmHostEntryIsRejected() {
    assertInvalid(withMitm(new MitmPolicy(true, false, 0, Arrays.asList((String) null), null)))
        .hasMessage("sandbox: mitm.hosts[0] is empty");
  }

  @Test
  void validMitmPasses() {
    NetPolicy p =
        withMitm(new MitmPolicy(true, true, 0, List.of("*.example.com"), List.of("bank.example")));

    assertThat(p.validate()).isSameAs(p);
    assertThat(withMitm(MitmPolicy.all()).validate().mitm()).isEqualTo(MitmPolicy.all());
  }

  @Test
  void mitmChecksBodyCapThenHostsThenExcludeHosts() {
    assertInvalid(withMitm(new MitmPolicy(true, false, -5, List.of(" "), List.of(" "))))
        .hasMessageContaining("max_body_bytes -5");
    assertInvalid(withMitm(new MitmPolicy(true, false, 0, List.of(" "), List.of(" "))))
        .hasMessageContaining("mitm.hosts[0]");
  }

  // ---- order of the rules ----

  @Test
  void proxyIsCheckedBeforeRules() {
    NetPolicy p =
        NetPolicy.builder()
            .mode(NetMode.PROXY)
            .proxy("ftp://p")
            .rules(NetRule.allow(" ", -1))
            .unixSockets(List.of("rel"))
            .mitm(new MitmPolicy(false, false, -1, List.of(), List.of()))
            .build();

    assertInvalid(p).hasMessageContaining("proxy scheme \"ftp\"");
  }

  @Test
  void rulesAreCheckedBeforeUnixSockets() {
    NetPolicy p =
        NetPolicy.builder()
            .rules(NetRule.allow("h", 65536))
            .unixSockets(List.of("rel"))
            .mitm(new MitmPolicy(false, false, -1, List.of(), List.of()))
            .build();

    assertInvalid(p).hasMessageContaining("net rule 0 port 65536 out of range");
  }

  @Test
  void unixSocketsAreCheckedBeforeMitm() {
    NetPolicy p =
        NetPolicy.builder()
            .unixSockets(List.of("rel"))
            .mitm(new MitmPolicy(false, false, -1, List.of(), List.of()))
            .build();

    assertInvalid(p).hasMessageContaining("unix socket path \"rel\"");
  }

  @Test
  void modeAndFieldConsistencyIsNotChecked() {
    NetPolicy p =
        NetPolicy.builder()
            .mode(NetMode.DENY_ALL)
            .allowHosts(List.of("example.com"))
            .rules(NetRule.allow("x"))
            .proxy("http://p:1")
            .mitm(MitmPolicy.all())
            .build();

    assertThat(p.validate()).isSameAs(p);
  }
}
