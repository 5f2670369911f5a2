package dev.confine.host;

import dev.confine.Enforcement;
import dev.confine.ExecOptions;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;

/**
 * The pre-spawn checks every backend makes before it runs anything (the seed's {@code
 * ValidateExecPolicy}), generalised from "can the ps sampler run here" to the backend's own {@link
 * Enforcement} report.
 */
public final class ExecPolicy {
  private ExecPolicy() {}

  /**
   * Fails when {@code options} ask for resource caps that {@code enforcement} does not hold, in
   * this order, all {@link SandboxException.Kind#NOT_AVAILABLE}:
   *
   * <ol>
   *   <li>a disk quota (no backend has one);
   *   <li>a CPU budget without a timeout (the budget is timeout x millicores / 1000);
   *   <li>a memory cap the runner cannot enforce;
   *   <li>a CPU budget the runner cannot enforce;
   *   <li>a process cap the runner cannot enforce;
   *   <li>a CPU throttle the runner cannot enforce (no CPU controller).
   * </ol>
   *
   * <p>Network posture and working-directory containment are the backend's own checks.
   *
   * @throws SandboxException NOT_AVAILABLE naming what cannot be enforced
   */
  public static void validate(ExecOptions options, Enforcement enforcement) {
    ResourceLimits r = ExecOptions.orDefaults(options).resources();
    if (r.diskBytes() != 0) {
      throw unavailable("disk limits not supported (no quota mechanism)");
    }
    if (r.cpuMillicores() != 0 && !options.hasTimeout()) {
      throw unavailable(
          "resources.cpuMillicores requires a per-call timeout to derive a CPU-time budget");
    }
    if (r.memoryBytes() > 0 && !enforcement.memoryCap()) {
      throw unavailable("this runner cannot enforce a memory cap on this host");
    }
    if (r.cpuMillicores() > 0 && !enforcement.cpuCap()) {
      throw unavailable("this runner cannot enforce a CPU budget on this host");
    }
    if (r.maxProcesses() > 0 && !enforcement.pidsCap()) {
      throw unavailable("this runner cannot enforce a process cap on this host");
    }
    if (r.cpuThrottleMillicores() > 0 && !enforcement.cpuThrottle()) {
      throw unavailable(
          "this runner cannot throttle CPU on this host (resources.cpuThrottleMillicores needs a"
              + " cgroup CPU controller)");
    }
  }

  private static SandboxException unavailable(String what) {
    return SandboxException.of(SandboxException.Kind.NOT_AVAILABLE, "" + what);
  }
}
