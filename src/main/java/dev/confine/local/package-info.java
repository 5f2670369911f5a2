/** {@link dev.confine.local.LocalRunner}: host processes with policy checks and no isolation. */
package dev.confine.local;
