package dev.confine.linux.child;

/**
 * The heap that the output captures of running execs may hold together: a quarter of the maximum
 * heap ({@link Runtime#maxMemory()}) for the whole JVM. Without it, many execs that each stay under
 * their cap could still fill the heap together, and then any allocation anywhere in the JVM fails;
 * with it, a capture that finds the budget spent stops keeping (it still reads and counts) and its
 * exec reports what it lost.
 *
 * <p>A capture reserves each chunk before allocating it and gives its reservation back when its
 * exec has ended ({@link Execution#closeStreams}); the copies that turn the chunks into a result
 * are outside the budget and made one large result at a time ({@link Execution#handOver}).
 */
final class CaptureBudget {
  /** The JVM's budget. */
  static final CaptureBudget SHARED = new CaptureBudget(Runtime.getRuntime().maxMemory() / 4);

  private final long capacity;
  private long used;

  CaptureBudget(long capacity) {
    this.capacity = capacity;
  }

  /** Reserves {@code bytes} if they fit. */
  synchronized boolean reserve(long bytes) {
    if (bytes > capacity - used) {
      return false;
    }
    used += bytes;
    return true;
  }

  /** Gives back what {@link #reserve} took. */
  synchronized void release(long bytes) {
    used -= bytes;
  }

  /** The budget's size in bytes. */
  long capacity() {
    return capacity;
  }

  /** How much is reserved now. */
  synchronized long used() {
    return used;
  }
}
