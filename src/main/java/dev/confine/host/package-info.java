/**
 * Internal, not exported: what every backend that runs host processes shares. The exec pipeline
 * from a request to the engine and back ({@link dev.confine.host.HostExec}), the session adapter
 * ({@link dev.confine.host.HostSession}) with its output log and registry, the policy checks made
 * before a spawn, the host's environment snapshot, the work directory and how caps are planned. A
 * backend uses this package and the engine; it never uses another backend.
 */
package dev.confine.host;
