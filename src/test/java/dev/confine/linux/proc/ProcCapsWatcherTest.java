package dev.confine.linux.proc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.sys.Syscalls;
import dev.confine.linux.tree.Cap;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ProcCapsWatcherTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final long MIB = 1L << 20;
  private static final int SIGKILL = 9;

  /** Records what a watch reports, with the thread it reported on. */
  static final class Events implements ProcCapsWatcher.Listener {
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<Throwable> causes = new CopyOnWriteArrayList<>();
    final List<String> threads = new CopyOnWriteArrayList<>();

    @Override
    public void exceeded(Cap cap) {
      threads.add(Thread.currentThread().getName());
      events.add("exceeded:" + cap.word());
    }

    @Override
    public void unenforceable(Throwable cause) {
      threads.add(Thread.currentThread().getName());
      causes.add(cause);
      events.add("unenforceable");
    }
  }

  @Test
  void aMemoryHogAboveItsCapIsKilled() throws Exception {
    // 256 MiB in 8 MiB steps, 20 ms apart: well past the 32 MiB cap long before it is done.
    try (SpawnedTree tree =
        SpawnedTree.exec(
            "/usr/bin/python3",
            "python3",
            "-c",
            "import time\n"
                + "b = []\n"
                + "for i in range(32):\n"
                + "    b.append(bytearray(b'\\x01') * (8 << 20)); time.sleep(0.02)\n"
                + "print('survived', flush=True); time.sleep(60)\n")) {
      Events events = new Events();
      ProcCapsWatcher.Handle h = ProcCapsWatcher.watch(tree.pid(), 32 * MIB, 0, events);
      try {
        assertThat(tree.awaitExit(WAIT)).isTrue();
        assertThat(tree.execution().exitStatus().signal()).isEqualTo(SIGKILL);
        SpawnedTree.await(() -> !events.events.isEmpty(), WAIT, "the report");
        assertThat(events.events).containsExactly("exceeded:memory");
        assertThat(events.threads).containsExactly("confine-caps-sampler");
        assertThat(h.exceeded()).isEqualTo(Cap.MEMORY);
        assertThat(h.unenforceable()).isNull();
        assertThat(h.peakRssBytes()).isBetween(32 * MIB, 256 * MIB);
        assertThat(tree.stdout()).doesNotContain("survived");
      } finally {
        h.stop();
      }
    }
  }

  @Test
  void aCpuBurnerAboveItsCapIsKilled() throws Exception {
    try (SpawnedTree tree = SpawnedTree.shell("while :; do :; done")) {
      Events events = new Events();
      long cap = TimeUnit.MILLISECONDS.toNanos(300);
      ProcCapsWatcher.Handle h = ProcCapsWatcher.watch(tree.pid(), 1L << 40, cap, events);
      try {
        assertThat(tree.awaitExit(WAIT)).isTrue();
        assertThat(tree.execution().exitStatus().signal()).isEqualTo(SIGKILL);
        SpawnedTree.await(() -> !events.events.isEmpty(), WAIT, "the report");
        assertThat(events.events).containsExactly("exceeded:cpu");
        assertThat(h.exceeded()).isEqualTo(Cap.CPU);
        assertThat(h.cpuUserNanos() + h.cpuSystemNanos())
            .isBetween(cap, cap + TimeUnit.MILLISECONDS.toNanos(500));
        assertThat(h.peakRssBytes()).isPositive();
      } finally {
        h.stop();
      }
    }
  }

  @Test
  void aMemberThatLeftTheGroupIsKilledWithIt() throws Exception {
    // setsid execs in place (its caller is no group leader): the sleep is the leader's child in a
    // session and group of its own, which kill(-pgid) does not reach.
    try (SpawnedTree tree = SpawnedTree.shell("setsid sleep 600 & echo stray $!; exec sleep 600")) {
      String out = tree.awaitStdout("stray", WAIT);
      int stray = Integer.parseInt(out.strip().split(" ")[1]);
      try {
        SpawnedTree.await(() -> sessionOf(stray) == stray, WAIT, "the stray's setsid");
        Events events = new Events();
        ProcCapsWatcher.Handle h = ProcCapsWatcher.watch(tree.pid(), 1, 0, events);
        try {
          assertThat(tree.awaitExit(WAIT)).isTrue();
          SpawnedTree.await(() -> !events.events.isEmpty(), WAIT, "the report");
          assertThat(events.events).containsExactly("exceeded:memory");
          SpawnedTree.await(() -> !alive(stray), WAIT, "the stray's death");
        } finally {
          h.stop();
        }
      } finally {
        if (alive(stray)) {
          Syscalls.kill(stray, SIGKILL);
        }
      }
    }
  }

  /** The session of {@code pid}, or -1 when it is gone. */
  private static int sessionOf(int pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return Integer.parseInt(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[3]);
    } catch (IOException e) {
      return -1;
    }
  }

  /** Whether {@code pid} runs (a zombie does not). */
  private static boolean alive(int pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void memoryIsCheckedBeforeCpuAndCapsAreInclusive() throws Exception {
    try (SpawnedTree tree = SpawnedTree.exec("/bin/sleep", "sleep", "600")) {
      Events events = new Events();
      // Both caps are reached by the very first sample, exactly.
      TreeSampler exact = () -> new ProcSampler.Sample(100, 40, 60, 1);
      ProcCapsWatcher.Handle h = ProcCapsWatcher.watch(tree.pid(), 100, 100, events, exact);
      try {
        assertThat(tree.awaitExit(WAIT)).isTrue();
        SpawnedTree.await(() -> !events.events.isEmpty(), WAIT, "the report");
        assertThat(events.events).containsExactly("exceeded:memory");
        assertThat(h.cpuUserNanos()).isEqualTo(40);
        assertThat(h.cpuSystemNanos()).isEqualTo(60);
      } finally {
        h.stop();
      }
    }
  }

  @Test
  void threeFailuresInARowKillTheTreeAndReportItUnenforceable() throws Exception {
    try (SpawnedTree tree = SpawnedTree.exec("/bin/sleep", "sleep", "600")) {
      Events events = new Events();
      AtomicInteger calls = new AtomicInteger();
      IOException boom = new IOException("boom");
      TreeSampler failing =
          () -> {
            calls.incrementAndGet();
            throw boom;
          };
      ProcCapsWatcher.Handle h = ProcCapsWatcher.watch(tree.pid(), MIB, 0, events, failing);
      try {
        assertThat(tree.awaitExit(WAIT)).isTrue();
        assertThat(tree.execution().exitStatus().signal()).isEqualTo(SIGKILL);
        SpawnedTree.await(() -> !events.events.isEmpty(), WAIT, "the report");
        assertThat(events.events).containsExactly("unenforceable");
        Throwable cause = h.unenforceable();
        assertThat(cause).isSameAs(events.causes.get(0));
        assertThat(cause.getCause()).isSameAs(boom);
        assertThat(cause)
            .hasMessageContaining("failed 3 times in a row")
            .hasMessageContaining("boom");
        assertThat(h.exceeded()).isNull();
        TimeUnit.MILLISECONDS.sleep(200);
        assertThat(calls.get()).isEqualTo(3);
      } finally {
        h.stop();
      }
    }
  }

  @Test
  void twoFailuresThenARecoveryKeepGoing() throws Exception {
    try (SpawnedTree tree = SpawnedTree.exec("/bin/sleep", "sleep", "600")) {
      Events events = new Events();
      AtomicInteger calls = new AtomicInteger();
      // fail, fail, ok, fail, fail, ok, ...: never three in a row.
      TreeSampler flaky =
          () -> {
            if (calls.incrementAndGet() % 3 != 0) {
              throw new IOException("flaky");
            }
            return new ProcSampler.Sample(MIB, 7, 8, 1);
          };
      ProcCapsWatcher.Handle h = ProcCapsWatcher.watch(tree.pid(), 2 * MIB, 0, events, flaky);
      try {
        SpawnedTree.await(() -> calls.get() >= 12, WAIT, "twelve samples");
        assertThat(tree.awaitExit(Duration.ZERO)).isFalse();
        assertThat(events.events).isEmpty();
        assertThat(h.unenforceable()).isNull();
        assertThat(h.exceeded()).isNull();
        assertThat(h.peakRssBytes()).isEqualTo(MIB);
        assertThat(h.cpuUserNanos()).isEqualTo(7);
      } finally {
        h.stop();
      }
    }
  }

  @Test
  void stopWaitsForASampleInProgressAndEndsEverything() throws Exception {
    try (SpawnedTree tree = SpawnedTree.exec("/bin/sleep", "sleep", "600")) {
      Events events = new Events();
      AtomicInteger calls = new AtomicInteger();
      CountDownLatch inSample = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      // The first sample blocks until released, then reports a breach.
      TreeSampler slow =
          () -> {
            calls.incrementAndGet();
            inSample.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              throw new IOException(e);
            }
            return new ProcSampler.Sample(2 * MIB, 0, 0, 1);
          };
      ProcCapsWatcher.Handle h = ProcCapsWatcher.watch(tree.pid(), MIB, 0, events, slow);
      assertThat(inSample.await(10, TimeUnit.SECONDS)).isTrue();
      CountDownLatch stopped = new CountDownLatch(1);
      Thread stopper =
          Thread.ofPlatform()
              .start(
                  () -> {
                    h.stop();
                    stopped.countDown();
                  });
      assertThat(stopped.await(200, TimeUnit.MILLISECONDS)).as("stop() waits").isFalse();
      release.countDown();
      assertThat(stopped.await(10, TimeUnit.SECONDS)).isTrue();
      stopper.join();
      // The sample in progress completed before stop() returned, its breach included.
      List<String> atStop = List.copyOf(events.events);
      assertThat(atStop).containsExactly("exceeded:memory");
      TimeUnit.MILLISECONDS.sleep(200);
      assertThat(events.events).isEqualTo(atStop);
      assertThat(calls.get()).isEqualTo(1);
      h.stop(); // idempotent
    }
  }

  @Test
  void noSampleAndNoCallbackAfterStopReturns() throws Exception {
    try (SpawnedTree tree = SpawnedTree.exec("/bin/sleep", "sleep", "600")) {
      Events events = new Events();
      AtomicInteger calls = new AtomicInteger();
      TreeSampler counting =
          () -> {
            calls.incrementAndGet();
            return new ProcSampler.Sample(0, 0, 0, 1);
          };
      ProcCapsWatcher.Handle h = ProcCapsWatcher.watch(tree.pid(), MIB, 0, events, counting);
      SpawnedTree.await(() -> calls.get() >= 3, WAIT, "three samples");
      h.stop();
      int atStop = calls.get();
      TimeUnit.MILLISECONDS.sleep(300);
      assertThat(calls.get()).isEqualTo(atStop);
      assertThat(events.events).isEmpty();
      assertThat(tree.awaitExit(Duration.ZERO)).as("a stopped watch kills nothing").isFalse();
      h.stop();
    }
  }

  @Test
  void stopFromTheListenerItselfIsAllowed() throws Exception {
    try (SpawnedTree tree = SpawnedTree.exec("/bin/sleep", "sleep", "600")) {
      ProcCapsWatcher.Handle[] handle = new ProcCapsWatcher.Handle[1];
      CountDownLatch created = new CountDownLatch(1);
      CountDownLatch called = new CountDownLatch(1);
      ProcCapsWatcher.Listener stopping =
          new ProcCapsWatcher.Listener() {
            @Override
            public void exceeded(Cap cap) {
              try {
                created.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              handle[0].stop();
              called.countDown();
            }

            @Override
            public void unenforceable(Throwable cause) {}
          };
      handle[0] =
          ProcCapsWatcher.watch(
              tree.pid(), 1, 0, stopping, () -> new ProcSampler.Sample(2, 0, 0, 1));
      created.countDown();
      assertThat(called.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(handle[0].exceeded()).isEqualTo(Cap.MEMORY);
    }
  }

  @Test
  void manyWatchesShareOneThread() throws Exception {
    List<SpawnedTree> trees = new ArrayList<>();
    List<ProcCapsWatcher.Handle> handles = new ArrayList<>();
    try {
      for (int i = 0; i < 50; i++) {
        trees.add(SpawnedTree.exec("/bin/sleep", "sleep", "600"));
      }
      // The engine's own threads (event loop) and the sampler's exist from here on.
      ProcCapsWatcher.watch(trees.get(0).pid(), 0, 0, new Events()).stop();
      int before = ManagementFactory.getThreadMXBean().getThreadCount();
      Events events = new Events();
      for (SpawnedTree t : trees) {
        handles.add(ProcCapsWatcher.watch(t.pid(), 1L << 40, 0, events));
      }
      SpawnedTree.await(
          () -> handles.stream().allMatch(h -> h.peakRssBytes() > 0), WAIT, "every tree sampled");
      int after = ManagementFactory.getThreadMXBean().getThreadCount();
      assertThat(after).isLessThanOrEqualTo(before);
      long samplerThreads =
          Thread.getAllStackTraces().keySet().stream()
              .filter(t -> t.getName().equals("confine-caps-sampler"))
              .count();
      assertThat(samplerThreads).isEqualTo(1);
      assertThat(events.events).isEmpty();
    } finally {
      handles.forEach(ProcCapsWatcher.Handle::stop);
      trees.forEach(SpawnedTree::close);
    }
  }

  @Test
  void withoutCapsAWatchOnlyMeasures() throws Exception {
    try (SpawnedTree tree = SpawnedTree.shell("while :; do :; done")) {
      ProcCapsWatcher.Handle h = ProcCapsWatcher.watch(tree.pid(), 0, 0, new Events());
      try {
        SpawnedTree.await(
            () -> h.cpuUserNanos() + h.cpuSystemNanos() >= TimeUnit.MILLISECONDS.toNanos(100),
            WAIT,
            "CPU time to show");
        assertThat(h.peakRssBytes()).isPositive();
        assertThat(tree.awaitExit(Duration.ZERO)).isFalse();
      } finally {
        h.stop();
      }
    }
  }
}
