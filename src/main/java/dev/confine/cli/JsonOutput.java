package dev.confine.cli;

import dev.confine.ExecResult;
import dev.confine.ResourceUsage;
import dev.confine.SandboxException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;

/**
 * The {@code --json} report of one exec: a single JSON object on one line with a fixed set of keys
 * in a fixed order, so that scripts can rely on its shape.
 *
 * <pre>{@code
 * {"exit_code":0,"signal":null,"stdout":"hi\n","stderr":"","stdout_truncated":false,
 *  "stderr_truncated":false,"wall_ms":12.5,"child_ms":3.1,"error":null,
 *  "usage":{"peak_memory_bytes":1277952,"cpu_user_ms":1.2,"cpu_system_ms":0.4,
 *           "pids_limit_hit":false}}
 * }</pre>
 *
 * <p>{@code wall_ms} is the whole call, the up to 2 s of waiting for output that background
 * processes hold after the child exited included; {@code child_ms} is the child's own run, from its
 * spawn to its exit.
 *
 * <p>{@code usage} holds what the backend measured of the whole process tree (with resource caps:
 * cgroups or the /proc sampler); a value it did not measure is null.
 *
 * <p>Output is decoded as UTF-8 with malformed bytes replaced by U+FFFD, since JSON strings cannot
 * hold arbitrary bytes; callers that need the exact bytes run without {@code --json}.
 */
final class JsonOutput {
  private JsonOutput() {}

  /**
   * The report of {@code outcome}: the fields of its result (the partial result of an error that
   * carries one), or those of a child that never started (exit code -1, no output, zero time) when
   * there is no result; {@code error} is null or an object with the error's kind and message.
   */
  static String of(Outcome outcome) {
    ExecResult r = outcome.result();
    StringBuilder b = new StringBuilder(256);
    b.append("{\"exit_code\":").append(r == null ? -1 : r.exitCode());
    b.append(",\"signal\":").append(r == null || !r.signaled() ? "null" : r.signal());
    b.append(",\"stdout\":");
    JsonString.appendQuoted(b, r == null ? "" : r.stdoutText());
    b.append(",\"stderr\":");
    JsonString.appendQuoted(b, r == null ? "" : r.stderrText());
    b.append(",\"stdout_truncated\":").append(r != null && r.stdoutTruncated());
    b.append(",\"stderr_truncated\":").append(r != null && r.stderrTruncated());
    b.append(",\"wall_ms\":").append(r == null ? "0" : millis(r.wallTime()));
    b.append(",\"child_ms\":").append(r == null ? "0" : millis(r.childTime()));
    b.append(",\"error\":");
    SandboxException e = outcome.error();
    if (e == null) {
      b.append("null");
    } else {
      b.append("{\"kind\":");
      JsonString.appendQuoted(b, e.kind().name());
      b.append(",\"message\":");
      JsonString.appendQuoted(b, e.getMessage());
      b.append('}');
    }
    ResourceUsage u = r == null ? ResourceUsage.NOT_MEASURED : r.usage();
    b.append(",\"usage\":{\"peak_memory_bytes\":")
        .append(u.peakMemoryBytes() < 0 ? "null" : Long.toString(u.peakMemoryBytes()));
    b.append(",\"cpu_user_ms\":").append(u.cpuUser() == null ? "null" : millis(u.cpuUser()));
    b.append(",\"cpu_system_ms\":").append(u.cpuSystem() == null ? "null" : millis(u.cpuSystem()));
    b.append(",\"pids_limit_hit\":").append(u.pidsLimitHit()).append('}');
    return b.append('}').toString();
  }

  /** {@code d} in milliseconds with at most three decimals and no trailing zeros. */
  static String millis(Duration d) {
    BigDecimal ms =
        BigDecimal.valueOf(d.getSeconds())
            .multiply(BigDecimal.valueOf(1000))
            .add(BigDecimal.valueOf(d.getNano(), 6));
    return ms.setScale(3, RoundingMode.HALF_UP).stripTrailingZeros().toPlainString();
  }
}
