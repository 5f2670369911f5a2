package dev.confine.linux.tree;

import static dev.confine.testing.NativeFds.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CapWatch}: checks are polled on its one thread, tick after tick, until they return false,
 * throw or are removed; with none left it parks, and a new check wakes it.
 *
 * <p>Absence (a check not polled again) is shown with a second check used as a clock: the watch
 * polls every check of a tick on its one thread, so once the clock has been polled twice more, a
 * check still in the set would have been polled again in between.
 */
@Timeout(120)
class CapWatchTest {
  /** Counts its polls and the threads that made them; keeps going while {@code keep} says so. */
  private static final class Counting implements CapWatch.Check {
    final AtomicInteger polls = new AtomicInteger();
    final Set<String> threads = ConcurrentHashMap.newKeySet();
    volatile boolean keep = true;
    volatile RuntimeException thrown;

    @Override
    public boolean poll() {
      polls.incrementAndGet();
      threads.add(Thread.currentThread().getName());
      if (thrown != null) {
        throw thrown;
      }
      return keep;
    }
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + WAIT + " waiting for " + what);
      }
      TimeUnit.MILLISECONDS.sleep(5);
    }
  }

  /** Waits until the watch has polled a fresh check over two more ticks, then removes it. */
  private static void twoMoreTicks() throws InterruptedException {
    Counting clock = new Counting();
    CapWatch.add(clock);
    try {
      await(() -> clock.polls.get() >= 3, "three polls of the clock check");
    } finally {
      CapWatch.remove(clock);
    }
  }

  @Test
  void aCheckIsPolledOnTheWatchThreadUntilItReturnsFalse() throws Exception {
    Counting c = new Counting();
    CapWatch.add(c);
    try {
      await(() -> c.polls.get() >= 3, "three polls");
      c.keep = false;
      int stopped = c.polls.get() + 1; // at most the poll that returns false comes after this
      twoMoreTicks();
      assertThat(c.polls.get()).isLessThanOrEqualTo(stopped);
      int after = c.polls.get();
      twoMoreTicks();
      assertThat(c.polls.get()).as("polls after it returned false").isEqualTo(after);
      assertThat(c.threads).containsExactly("confine-cap-watch");
    } finally {
      CapWatch.remove(c);
    }
  }

  @Test
  void aCheckThatThrowsIsDropped() throws Exception {
    Counting c = new Counting();
    c.thrown = new IllegalStateException("a broken check");
    CapWatch.add(c);
    try {
      await(() -> c.polls.get() >= 1, "a poll");
      twoMoreTicks();
      assertThat(c.polls.get()).isEqualTo(1);
    } finally {
      CapWatch.remove(c);
    }
  }

  @Test
  void aRemovedCheckIsNotPolledAgain() throws Exception {
    Counting c = new Counting();
    CapWatch.add(c);
    await(() -> c.polls.get() >= 2, "two polls");
    CapWatch.remove(c);
    twoMoreTicks(); // a tick that had begun may still poll it
    int removed = c.polls.get();
    twoMoreTicks();
    assertThat(c.polls.get()).isEqualTo(removed);
  }

  @Test
  void manyChecksArePolledTogether() throws Exception {
    Counting[] checks = new Counting[100];
    for (int i = 0; i < checks.length; i++) {
      checks[i] = new Counting();
      CapWatch.add(checks[i]);
    }
    try {
      for (Counting c : checks) {
        await(() -> c.polls.get() >= 2, "two polls of each");
      }
    } finally {
      for (Counting c : checks) {
        CapWatch.remove(c);
      }
    }
  }

  @Test
  void withNoCheckLeftTheWatchParksAndANewCheckWakesIt() throws Exception {
    twoMoreTicks(); // the class (and its thread) started
    Thread watch =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().equals("confine-cap-watch"))
            .findFirst()
            .orElseThrow();
    assertThat(watch.isDaemon()).isTrue();
    // It lingers for some ticks, then parks with no timeout (WAITING; ticking is TIMED_WAITING).
    // It stays ticking only while some check is left: one another test did not remove.
    await(() -> watch.getState() == Thread.State.WAITING, "the watch to park");
    Counting c = new Counting();
    CapWatch.add(c);
    try {
      await(() -> c.polls.get() >= 1, "a poll after the wake-up");
    } finally {
      CapWatch.remove(c);
    }
  }
}
