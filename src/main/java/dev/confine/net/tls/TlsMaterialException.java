package dev.confine.net.tls;

/**
 * A failure to make TLS material (a key, a certificate, a TLS context or a trust store) that is not
 * the caller's fault: a JDK security algorithm missing, a signature that cannot be made. It carries
 * the checked exception that reported it as its cause.
 */
public final class TlsMaterialException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  TlsMaterialException(String message, Throwable cause) {
    super(message, cause);
  }
}
