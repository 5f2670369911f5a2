/**
 * Test doubles for your own tests: {@link dev.confine.testing.FakeRunner} stands in for a {@link
 * dev.confine.Runner} without running anything, recording what it was asked and answering with what
 * the test scripted. Every class is thread-safe.
 *
 * <p>This package uses only the API ({@code dev.confine}, {@code dev.confine.session}) and the JDK,
 * and no code of the library uses it.
 */
package dev.confine.testing;
