package dev.confine.linux;

import java.util.Locale;
import java.util.Optional;

/**
 * Whether the engine can run in this JVM, in the style of Netty's {@code Epoll}: {@link
 * #isAvailable()}, {@link #unavailabilityCause()}. The probe runs once: Linux on x86-64 (the
 * generated bindings carry that ABI's layouts and syscall numbers), native access enabled for this
 * code, and pidfds in the kernel.
 */
public final class NativeAccess {
  private static final Optional<String> CAUSE = probe();

  private NativeAccess() {}

  /** Whether the engine works here. */
  public static boolean isAvailable() {
    return CAUSE.isEmpty();
  }

  /** Why the engine does not work here, in words a user can act on; empty when it does. */
  public static Optional<String> unavailabilityCause() {
    return CAUSE;
  }

  private static Optional<String> probe() {
    String os = System.getProperty("os.name", "");
    if (!os.toLowerCase(Locale.ROOT).startsWith("linux")) {
      return Optional.of("Confine's engine needs Linux; this is " + os);
    }
    String arch = System.getProperty("os.arch", "");
    if (!arch.equals("amd64") && !arch.equals("x86_64")) {
      return Optional.of(
          "Confine's engine is built for Linux on x86-64 (its libc bindings carry that ABI); this"
              + " is "
              + arch);
    }
    Module module = NativeAccess.class.getModule();
    if (!module.isNativeAccessEnabled()) {
      String flag =
          module.isNamed()
              ? "--enable-native-access=" + module.getName()
              : "--enable-native-access=ALL-UNNAMED";
      return Optional.of(
          "Confine calls libc through the Foreign Function & Memory API, which this JVM has not"
              + " enabled for it: start java with "
              + flag);
    }
    try {
      int fd = Syscalls.pidfdOpen((int) ProcessHandle.current().pid());
      if (fd < 0) {
        return Optional.of(
            "the kernel has no pidfd_open (Linux 5.3 or newer is needed): "
                + Syscalls.strerror(-fd));
      }
      Syscalls.close(fd);
    } catch (LinkageError | RuntimeException e) {
      return Optional.of("libc could not be bound: " + e);
    }
    return Optional.empty();
  }
}
