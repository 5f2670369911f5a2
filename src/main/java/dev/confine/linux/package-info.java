/**
 * Confine's OS engine (internal): spawning through posix_spawn, one epoll event loop over pidfds
 * and pipes, and the native calls behind them. Only this package touches {@code
 * dev.confine.linux.libc}; backends ask the engine, never the kernel.
 */
package dev.confine.linux;
