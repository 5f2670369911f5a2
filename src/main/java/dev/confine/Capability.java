package dev.confine;

/**
 * One row of what a runner enforces on this host, for reports such as {@code confine doctor}.
 *
 * @param dimension the policy dimension ("memory", "cpu", "pids", ...)
 * @param enforced whether it holds here
 * @param detail the mechanism when enforced, the reason when not
 */
public record Capability(String dimension, boolean enforced, String detail) {}
