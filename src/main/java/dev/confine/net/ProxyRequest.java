package dev.confine.net;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A request the egress proxy intercepted in a TLS tunnel, as {@link ProxyHooks#onRequest} sees it
 * before it leaves for the destination.
 *
 * @param method the method ({@code GET})
 * @param scheme always {@code https}
 * @param host the host the client named: its {@code Host} header (HTTP/2: {@code :authority}), or
 *     the tunnel's {@code host:port} when it named none
 * @param path the request target as the client sent it, query included ({@code /search?q=x})
 * @param headers the request's headers as the client sent them: names in lower case, in order,
 *     values in order; immutable. HTTP/2's pseudo-headers are not among them.
 * @param body the body, when bodies are inspected and this one declared a length within the cap
 *     (see {@code docs/proxy.md}); empty otherwise. A copy is returned on every call.
 */
public record ProxyRequest(
    String method,
    String scheme,
    String host,
    String path,
    Map<String, List<String>> headers,
    Optional<byte[]> body) {

  /** Copies the headers and the body. */
  public ProxyRequest {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(scheme, "scheme");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(path, "path");
    headers = Messages.copy(headers);
    body = body.map(byte[]::clone);
  }

  /** The body, a fresh copy. */
  @Override
  public Optional<byte[]> body() {
    return body.map(byte[]::clone);
  }

  /** The first value of header {@code name} (any case), or empty. */
  public Optional<String> header(String name) {
    return Messages.first(headers, name);
  }
}
