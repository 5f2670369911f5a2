/**
 * Interactive and streaming process sessions: PTY and pipe sessions whose output is an append-only
 * byte log that any client can replay from a cursor, and the {@link
 * dev.confine.session.ProcessManager} that starts, lists and terminates them.
 *
 * <p>Get a manager with {@link dev.confine.session.ProcessManager#of(dev.confine.Runner)}: a
 * decorated runner's manager applies the same policy chain as its {@code exec}.
 */
package dev.confine.session;
