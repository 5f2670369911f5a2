/**
 * Test doubles for your own tests: {@link dev.confine.testing.FakeRunner} stands in for a {@link
 * dev.confine.Runner}, {@link dev.confine.testing.FakeProcessManager} for a {@link
 * dev.confine.session.ProcessManager} and {@link dev.confine.testing.FakeSession} for the sessions
 * it starts. None of them runs a process: they record what they were asked and answer with what the
 * test scripted, keeping the contract of the real runners and sessions (a session's reads block
 * until output or its end arrives, offsets and gaps are as in the real log, a closed session
 * refuses what a real one refuses). Every class is thread-safe.
 *
 * <p>This package uses only the API ({@code dev.confine}, {@code dev.confine.session}) and the JDK,
 * and no code of the library uses it.
 */
package dev.confine.testing;
