package dev.confine.linux;

import java.io.IOException;

/**
 * What {@link ProcCapsWatcher} needs from a sampler; tests replace {@link ProcSampler} with one
 * that fails on cue.
 */
interface TreeSampler {
  /** One sample of the tree; an exception counts as a sampling failure. */
  ProcSampler.Sample sample() throws IOException;

  /** Kills the members that left the leader's process group, which a group kill misses. */
  default void killStrays() {}
}
