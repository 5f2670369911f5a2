package dev.confine.net;

import io.netty.handler.codec.http.HttpHeaders;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** Header maps as hooks see them: lower-case names in order, immutable lists of values. */
final class Messages {
  private Messages() {}

  /** An immutable copy of {@code headers}, names lower-cased (values of equal names merged). */
  static Map<String, List<String>> copy(Map<String, List<String>> headers) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    headers.forEach(
        (name, values) ->
            out.computeIfAbsent(name.toLowerCase(Locale.ROOT), n -> new ArrayList<>())
                .addAll(values));
    out.replaceAll((name, values) -> List.copyOf(values));
    return Collections.unmodifiableMap(out);
  }

  /** The headers of a Netty message as a hook sees them. */
  static Map<String, List<String>> of(HttpHeaders headers) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    headers.forEach(
        e ->
            out.computeIfAbsent(e.getKey().toLowerCase(Locale.ROOT), n -> new ArrayList<>())
                .add(e.getValue()));
    return out;
  }

  static Optional<String> first(Map<String, List<String>> headers, String name) {
    List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }
}
