/**
 * Internal, not exported (yet): the bubblewrap backend's pieces. {@link
 * dev.confine.bwrap.BwrapFlags} assembles bwrap's command line from a call's policy as pure
 * functions, and {@link dev.confine.bwrap.BwrapSettings} checks and resolves what a runner is built
 * from (the seed's {@code New} steps), so that the runner on top of them only spawns.
 */
package dev.confine.bwrap;
