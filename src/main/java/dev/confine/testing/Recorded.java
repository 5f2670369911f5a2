package dev.confine.testing;

import java.util.List;

/** What the fakes record, read back by the test. */
final class Recorded {
  private Recorded() {}

  /**
   * The last of {@code recorded}.
   *
   * @throws IllegalStateException with {@code none} when nothing was recorded
   */
  static <T> T last(List<T> recorded, String none) {
    if (recorded.isEmpty()) {
      throw new IllegalStateException(none);
    }
    return recorded.getLast();
  }
}
