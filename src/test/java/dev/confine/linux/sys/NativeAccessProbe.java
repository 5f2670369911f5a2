package dev.confine.linux.sys;

import dev.confine.Enforcement;
import dev.confine.SandboxException;
import dev.confine.local.LocalRunner;
import java.util.List;

/** Run in a fresh JVM by {@link NativeAccessTest}: prints what the engine says about itself. */
final class NativeAccessProbe {
  private NativeAccessProbe() {}

  public static void main(String[] args) {
    System.out.println("available=" + NativeAccess.availability().isAvailable());
    System.out.println("cause=" + NativeAccess.availability().unavailabilityCause().orElse(""));
    LocalRunner runner = LocalRunner.create("/tmp");
    System.out.println(
        "enforcement=" + (runner.enforcement().equals(Enforcement.NONE) ? "NONE" : "some"));
    try {
      System.out.println("exec=ok:" + runner.exec("echo", List.of("hi"), null).stdoutText().trim());
    } catch (SandboxException e) {
      System.out.println("exec=" + e.kind() + ": " + e.getMessage());
    }
  }
}
