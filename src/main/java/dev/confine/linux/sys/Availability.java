package dev.confine.linux.sys;

import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import java.util.Objects;
import java.util.Optional;

/**
 * Whether a mechanism works on this host, and if not why, in words a user can act on: the one shape
 * of every probe of the engine ({@link NativeAccess}, {@code Landlock}, {@code SeccompFilter},
 * {@code ThreadNamespaces}' two namespaces, {@code Cgroups.probe}, the /proc sampler, spawning into
 * a cgroup), in the style of Netty's {@code Epoll}.
 */
public interface Availability {
  /** Why the mechanism does not work here; empty when it does. */
  Optional<String> unavailabilityCause();

  /** Whether the mechanism works here. */
  default boolean isAvailable() {
    return unavailabilityCause().isEmpty();
  }

  /**
   * Returns when the mechanism works here.
   *
   * @throws SandboxException NOT_AVAILABLE with the cause when it does not
   */
  default void ensureAvailable() {
    Optional<String> cause = unavailabilityCause();
    if (cause.isPresent()) {
      throw SandboxException.of(Kind.NOT_AVAILABLE, "" + cause.get());
    }
  }

  /**
   * This availability with {@code prefix} put before its cause ("needs Landlock: " and the kernel's
   * reason, say).
   */
  default Availability prefixed(String prefix) {
    return ofNullable(unavailabilityCause().map(why -> prefix + why).orElse(null));
  }

  /** Available when this and {@code other} are; else the cause of the first that is not. */
  default Availability and(Availability other) {
    return isAvailable() ? other : this;
  }

  /** A mechanism that works. */
  Availability AVAILABLE = new Probed(null);

  /** A mechanism that does not work, for {@code cause}. */
  static Availability unavailable(String cause) {
    return new Probed(Objects.requireNonNull(cause, "cause"));
  }

  /** Available when {@code cause} is null, else unavailable for it. */
  static Availability ofNullable(String cause) {
    return cause == null ? AVAILABLE : new Probed(cause);
  }

  /**
   * The answer of a probe that yields nothing but the answer.
   *
   * @param cause why the mechanism does not work, or null when it does
   */
  record Probed(String cause) implements Availability {
    @Override
    public Optional<String> unavailabilityCause() {
      return Optional.ofNullable(cause);
    }
  }
}
