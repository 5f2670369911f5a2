package dev.confine.session;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@link ProcessSession} that forwards every call to another: the base of a decorator that
 * changes a few calls and keeps the rest (extend it and override those). The two timed reads are
 * forwarded, the read into a buffer included, so that a decorated session still copies straight
 * from its log; the reads without a timeout are {@link ProcessSession}'s defaults over the timed
 * ones, so an override of a timed read covers its untimed twin. A decorator that changes what reads
 * return overrides both timed reads. It forwards neither {@link ProcessSignaler} nor {@link
 * ProcessEventSource}: a decorator that offers them implements them itself.
 */
public abstract class ForwardingProcessSession implements ProcessSession {
  private final ProcessSession delegate;

  /** A session whose calls go to {@code delegate}. */
  protected ForwardingProcessSession(ProcessSession delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** The session the calls go to. */
  protected ProcessSession delegate() {
    return delegate;
  }

  @Override
  public String id() {
    return delegate.id();
  }

  @Override
  public int pid() {
    return delegate.pid();
  }

  @Override
  public ProcessOutput read(long afterSeq, int maxBytes, Duration timeout)
      throws InterruptedException {
    return delegate.read(afterSeq, maxBytes, timeout);
  }

  @Override
  public OutputRead read(long afterSeq, ByteBuffer into, Duration timeout)
      throws InterruptedException {
    return delegate.read(afterSeq, into, timeout);
  }

  @Override
  public void write(byte[] data) throws InterruptedException {
    delegate.write(data);
  }

  @Override
  public void closeStdin() {
    delegate.closeStdin();
  }

  @Override
  public void resize(int rows, int cols) {
    delegate.resize(rows, cols);
  }

  @Override
  public void terminate() {
    delegate.terminate();
  }

  @Override
  public ProcessExit waitFor() throws InterruptedException {
    return delegate.waitFor();
  }

  @Override
  public Optional<ProcessExit> waitFor(Duration timeout) throws InterruptedException {
    return delegate.waitFor(timeout);
  }

  @Override
  public Optional<ProcessExit> exitValue() {
    return delegate.exitValue();
  }

  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public String toString() {
    return delegate.toString();
  }
}
