package dev.confine.linux.sys;

import java.util.Locale;

/**
 * Whether the engine can run in this JVM ({@link #availability()}). The probe runs once: Linux on
 * x86-64 (the generated bindings carry that ABI's layouts and syscall numbers), native access
 * enabled for this code, and pidfds in the kernel.
 */
public final class NativeAccess {
  private static final Availability AVAILABILITY = probe();

  private NativeAccess() {}

  /** Whether the engine works here, and if not why, in words a user can act on. */
  public static Availability availability() {
    return AVAILABILITY;
  }

  private static Availability probe() {
    String os = System.getProperty("os.name", "");
    if (!os.toLowerCase(Locale.ROOT).startsWith("linux")) {
      return Availability.unavailable("Confine's engine needs Linux; this is " + os);
    }
    String arch = System.getProperty("os.arch", "");
    if (!arch.equals("amd64") && !arch.equals("x86_64")) {
      return Availability.unavailable(
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
      return Availability.unavailable(
          "Confine calls libc through the Foreign Function & Memory API, which this JVM has not"
              + " enabled for it: start java with "
              + flag);
    }
    try {
      int fd = Syscalls.pidfdOpen((int) ProcessHandle.current().pid());
      if (fd < 0) {
        return Availability.unavailable(
            "the kernel has no pidfd_open (Linux 5.3 or newer is needed): "
                + Syscalls.strerror(-fd));
      }
      Syscalls.close(fd);
    } catch (LinkageError | RuntimeException e) {
      return Availability.unavailable("libc could not be bound: " + e);
    }
    return Availability.AVAILABLE;
  }
}
