package dev.confine.net;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A response to an intercepted request, as {@link ProxyHooks#onResponse} sees it before it reaches
 * the client.
 *
 * @param request the request it answers
 * @param status the status code ({@code 200})
 * @param headers the response's headers as the destination sent them: names in lower case, in
 *     order, values in order; immutable
 * @param body the body, when bodies are inspected and this one declared a length within the cap;
 *     empty otherwise. A copy is returned on every call.
 */
public record ProxyResponse(
    ProxyRequest request, int status, Map<String, List<String>> headers, Optional<byte[]> body) {

  /** Copies the headers and the body. */
  public ProxyResponse {
    Objects.requireNonNull(request, "request");
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
