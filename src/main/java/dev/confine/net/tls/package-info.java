/**
 * Internal, not exported: the TLS material of the egress proxy's interception (MITM) of the hosts a
 * policy selects. A certificate authority made fresh for each proxy ({@link
 * dev.confine.net.tls.CertificateAuthority}), the per-host leaf certificates it signs and the Netty
 * server contexts that present them, with the client context for the proxy's own connections
 * upstream ({@link dev.confine.net.tls.MitmContexts}), and the CA bundle a child is pointed at so
 * that it trusts the proxy ({@link dev.confine.net.tls.CaBundle}).
 *
 * <p>Certificates are built with BouncyCastle's PKIX library; keys, signatures and TLS are the
 * JDK's (SunEC, SunJSSE through Netty's {@code SslProvider.JDK}). BouncyCastle is never registered
 * as a JCA provider. Keys live in memory only.
 */
package dev.confine.net.tls;
