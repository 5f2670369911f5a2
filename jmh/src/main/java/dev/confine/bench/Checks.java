package dev.confine.bench;

/** Sanity checks on what a benchmark measured, so a broken run fails instead of looking fast. */
final class Checks {
  private Checks() {}

  static int exitedZero(int code) {
    if (code != 0) {
      throw new IllegalStateException("the child exited with " + code);
    }
    return code;
  }

  static int length(int length, int expected) {
    if (length != expected) {
      throw new IllegalStateException("captured " + length + " bytes, expected " + expected);
    }
    return length;
  }
}
