package dev.confine.cli;

import dev.confine.Runner;

/**
 * Makes the runner that {@code confine exec} and {@code shell} run on and {@code doctor} reports
 * on, so that tests can hand in a {@code dev.confine.testing.FakeRunner} where the binary builds
 * the real backend.
 */
@FunctionalInterface
interface RunnerFactory {
  /**
   * The runner for one invocation.
   *
   * @param root the absolute directory the child is confined to
   * @param defaultMaxOutputBytes the capture cap per output stream, 0 = the runner's own default
   * @return the runner
   * @throws dev.confine.SandboxException when no runner can be made on this host
   */
  Runner create(String root, long defaultMaxOutputBytes);

  /**
   * The runner for one invocation with the backend options of the command line; factories that have
   * no backend to configure (test fakes) ignore them.
   */
  default Runner create(String root, long defaultMaxOutputBytes, BackendOptions backend) {
    return create(root, defaultMaxOutputBytes);
  }
}
