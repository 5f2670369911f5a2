package dev.confine.cli;

import dev.confine.net.ProxyAuditListener;
import dev.confine.net.ProxyConnection;
import dev.confine.net.ProxyDecision;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * Writes the egress proxy's audit events as JSON lines, one write and flush each: {@code confine
 * proxy --audit} and {@code confine exec --audit}.
 */
final class AuditLines implements ProxyAuditListener {
  private final PrintWriter w;

  AuditLines(OutputStream sink) {
    this.w = new PrintWriter(new java.io.OutputStreamWriter(sink, StandardCharsets.UTF_8), false);
  }

  @Override
  public synchronized void decided(ProxyDecision d) {
    StringBuilder b = new StringBuilder("{\"event\":\"decision\"");
    decision(b, d);
    w.println(b.append('}'));
    w.flush();
  }

  @Override
  public synchronized void closed(ProxyConnection c) {
    StringBuilder b = new StringBuilder("{\"event\":\"closed\"");
    decision(b, c.decision());
    b.append(",\"bytes_out\":").append(c.bytesOut());
    b.append(",\"bytes_in\":").append(c.bytesIn());
    b.append(",\"duration_ms\":").append(c.duration().toMillis());
    field(b, "error", c.error());
    w.println(b.append('}'));
    w.flush();
  }

  private static void decision(StringBuilder b, ProxyDecision d) {
    field(b, "protocol", d.protocol().name().toLowerCase(Locale.ROOT));
    field(b, "host", d.host());
    b.append(",\"port\":").append(d.port());
    field(b, "action", d.action().toString());
    field(b, "rule", d.rule());
    field(b, "mode", d.mode().name().toLowerCase(Locale.ROOT));
    field(b, "reason", d.reason());
    field(b, "address", d.address());
  }

  private static void field(StringBuilder b, String name, String value) {
    b.append(",\"").append(name).append("\":");
    JsonString.appendQuoted(b, value);
  }

  /** {@code file} opened for appending (created when missing). */
  static OutputStream append(Path file) throws IOException {
    return Files.newOutputStream(
        file, StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
  }
}
