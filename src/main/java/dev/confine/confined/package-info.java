/**
 * {@link dev.confine.confined.ConfinedRunner}: host processes confined in-process by the kernel
 * (Landlock write bounds, a seccomp network filter), rootless.
 */
package dev.confine.confined;
