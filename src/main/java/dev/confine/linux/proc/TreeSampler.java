package dev.confine.linux.proc;

import java.io.IOException;

/**
 * What {@link ProcCapsWatcher} needs from a sampler; tests replace {@link ProcSampler} with one
 * that fails on cue.
 */
interface TreeSampler {
  /** One sample of the tree; an exception counts as a sampling failure. */
  ProcSampler.Sample sample() throws IOException;

  /**
   * A sample that looks everywhere the tree can be (a scan of its sessions), for the end of an
   * exec.
   *
   * @return whether any process of the tree is alive
   */
  default boolean lastLook() throws IOException {
    return sample().members() > 0;
  }

  /**
   * Kills every process of the tree it can find, the members that left the leader's process group
   * (which a group kill misses) included.
   */
  default void killTree() throws IOException {}
}
