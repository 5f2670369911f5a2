/**
 * {@link dev.confine.local.LocalRunner}: host processes with policy checks, caps and tree tracking,
 * and no confinement.
 */
package dev.confine.local;
