package dev.confine.session;

import dev.confine.ExecRequest;
import dev.confine.PolicyRunner;
import dev.confine.Runner;
import dev.confine.SandboxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The manager of a decorated runner: a start passes every decorator's policy, outermost first, as
 * an exec would, then reaches the backend's manager with the admitted program, arguments and
 * options. Listing and terminating go straight to the backend.
 */
final class PolicyChainManager implements ProcessManager {
  private final List<PolicyRunner> layers;
  private final Runner backend;
  private final ProcessManager base; // null: the backend has no sessions

  private PolicyChainManager(List<PolicyRunner> layers, Runner backend) {
    this.layers = List.copyOf(layers);
    this.backend = backend;
    this.base = backend instanceof ProcessManager m ? m : null;
  }

  static Optional<ProcessManager> of(Runner runner) {
    List<PolicyRunner> layers = new ArrayList<>();
    Runner r = runner;
    while (r instanceof PolicyRunner p) {
      layers.add(p);
      r = p.inner();
    }
    if (layers.isEmpty()) {
      return r instanceof ProcessManager m ? Optional.of(m) : Optional.empty();
    }
    return Optional.of(new PolicyChainManager(layers, r));
  }

  @Override
  public ProcessSession start(ProcessSpec spec) {
    List<String> argv = spec.argv();
    ExecRequest request =
        new ExecRequest(argv.get(0), argv.subList(1, argv.size()), spec.options(), spec.tty());
    for (PolicyRunner layer : layers) {
      request = layer.admit(request);
    }
    List<String> admitted = new ArrayList<>(request.args().size() + 1);
    admitted.add(request.command());
    admitted.addAll(request.args());
    return requireBase().start(spec.withArgv(admitted).withOptions(request.options()));
  }

  @Override
  public List<ProcessInfo> list() {
    return requireBase().list();
  }

  @Override
  public void terminate(String id) {
    requireBase().terminate(id);
  }

  private ProcessManager requireBase() {
    if (base == null) {
      throw SandboxException.of(
          SandboxException.Kind.NOT_AVAILABLE, "process sessions are not supported by " + backend);
    }
    return base;
  }
}
