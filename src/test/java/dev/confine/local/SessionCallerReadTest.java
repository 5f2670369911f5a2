package dev.confine.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.ResourceLimits;
import dev.confine.linux.loop.EventLoop;
import dev.confine.session.EventStream;
import dev.confine.session.OutputChunk;
import dev.confine.session.ProcessEvent;
import dev.confine.session.ProcessEventSource;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSpec;
import dev.confine.session.ProcessStream;
import dev.confine.testing.OpenFds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A platform thread blocked in a session's read reads the child's output itself (the outputs taken
 * off the event loop while output streams in) instead of waiting for the loop to hand it over.
 * Whoever reads, the log must hold every byte in order, watchers must see it, neither stream may be
 * starved, the loop must take over when the client stops reading, and a close or the end of the
 * drain must still work while a client holds the outputs.
 */
@Timeout(60)
class SessionCallerReadTest {
  private static final int MIB = 1 << 20;

  @TempDir Path root;
  private LocalRunner runner;

  @BeforeEach
  void setUp() {
    runner = LocalRunner.create(root.toString());
  }

  private static ExecOptions log(long bytes) {
    return ExecOptions.builder()
        .resources(ResourceLimits.builder().maxOutputBytes(bytes).build())
        .build();
  }

  /** Reads from {@code seq} to the end of the output; returns the bytes per stream. */
  private static long[] drain(ProcessSession s, long seq) throws InterruptedException {
    long[] perStream = new long[ProcessStream.values().length];
    while (true) {
      ProcessOutput out = s.read(seq, MIB, Duration.ofSeconds(30));
      long expected = seq;
      for (OutputChunk c : out.chunks()) {
        assertThat(c.seq()).isEqualTo(expected); // contiguous: nothing lost, nothing twice
        expected += c.length();
        perStream[c.stream().ordinal()] += c.length();
      }
      seq = out.nextSeq();
      if (out.eof()) {
        return perStream;
      }
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = ProcessStream.class,
      names = {"STDOUT", "STDERR"})
  void bothStreamsArriveWholeWhileOneFloods(ProcessStream flooded) throws Exception {
    // One stream floods with 64 MiB while the other gets 4 MiB in small writes at the same time.
    // The output that gave something last is read first: either way round, the trickle must
    // still be read.
    boolean stdout = flooded == ProcessStream.STDOUT;
    ProcessStream trickled = stdout ? ProcessStream.STDERR : ProcessStream.STDOUT;
    String script =
        "head -c "
            + 64 * MIB
            + " /dev/zero"
            + (stdout ? "" : " >&2")
            + " & i=0; while [ $i -lt 1024 ]; do head -c 4096 /dev/zero"
            + (stdout ? " >&2" : "")
            + "; i=$((i+1)); done; wait";
    try (ProcessSession s =
        runner.start(ProcessSpec.pipes(List.of("sh", "-c", script)).withOptions(log(256L * MIB)))) {
      long[] perStream = drain(s, 0);
      assertThat(perStream[flooded.ordinal()]).isEqualTo(64L * MIB);
      assertThat(perStream[trickled.ordinal()]).isEqualTo(4L * MIB);
      assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(0));
    }
  }

  @Test
  void aWatcherSeesEveryByteAReaderPulled() throws Exception {
    try (ProcessSession s =
        runner.start(
            ProcessSpec.pipes(List.of("head", "-c", Integer.toString(32 * MIB), "/dev/zero"))
                .withOptions(log(64L * MIB)))) {
      EventStream events = ProcessEventSource.of(s).orElseThrow().watch();
      try (var watcher = Executors.newSingleThreadExecutor()) {
        var watched =
            watcher.submit(
                () -> {
                  long bytes = 0;
                  long seq = 0;
                  ProcessEvent e;
                  while ((e = events.poll(Duration.ofSeconds(30))) != null) {
                    switch (e.type()) {
                      case OUTPUT -> {
                        assertThat(e.seq()).isEqualTo(seq);
                        seq += e.chunk().length();
                        bytes += e.chunk().length();
                      }
                      case LAG -> {
                        return -1L; // too slow for this machine: the log still holds it all
                      }
                      case EXITED -> {
                        return bytes;
                      }
                      default -> {}
                    }
                  }
                  return -2L;
                });
        assertThat(drain(s, 0)[ProcessStream.STDOUT.ordinal()]).isEqualTo(32L * MIB);
        long seen = watched.get();
        assertThat(seen).isIn(-1L, 32L * MIB);
      }
    }
  }

  @Test
  void whenTheReaderStopsTheLoopKeepsReading() throws Exception {
    // The reader takes a little and goes away; the child writes 8 MiB more through a 64 KiB pipe,
    // so it only finishes if the loop takes the outputs back and keeps draining into the log.
    try (ProcessSession s =
        runner.start(
            ProcessSpec.pipes(List.of("head", "-c", Integer.toString(8 * MIB), "/dev/zero"))
                .withOptions(log(16L * MIB)))) {
      ProcessOutput first = s.read(0, 4096, Duration.ofSeconds(10));
      assertThat(first.chunks()).isNotEmpty();
      assertThat(s.waitFor(Duration.ofSeconds(20))).contains(ProcessExit.exited(0));
      assertThat(drain(s, 0)[ProcessStream.STDOUT.ordinal()]).isEqualTo(8L * MIB);
    }
  }

  @Test
  void anOutputThatEndsFirstLeavesTheOtherToTheReader() throws Exception {
    // stdout closes at once; stderr then carries 16 MiB. The reader finds stdout's end itself
    // (the loop only closes it) and must go on reading stderr to the session's end.
    String script = "exec 1>&-; head -c " + 16 * MIB + " /dev/zero >&2";
    EventLoop loop = EventLoop.shared();
    int registrations = loop.registrationCount();
    try (ProcessSession s =
        runner.start(ProcessSpec.pipes(List.of("sh", "-c", script)).withOptions(log(32L * MIB)))) {
      long[] perStream = drain(s, 0);
      assertThat(perStream[ProcessStream.STDOUT.ordinal()]).isZero();
      assertThat(perStream[ProcessStream.STDERR.ordinal()]).isEqualTo(16L * MIB);
      assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(0));
    }
    assertThat(loop.registrationCount()).isEqualTo(registrations);
  }

  @Test
  void aReaderThatStopsAfterLongReadingIsTakenOverSoon() throws Exception {
    // The reader keeps up with 64 MiB for a while (the loop's check whether it stopped backs off
    // meanwhile), then stops; the rest must still reach the log through the loop promptly.
    long total = 96L * MIB;
    try (ProcessSession s =
        runner.start(
            ProcessSpec.pipes(List.of("head", "-c", Long.toString(total), "/dev/zero"))
                .withOptions(log(128L * MIB)))) {
      long seq = 0;
      while (seq < 64L * MIB) {
        seq = s.read(seq, MIB, Duration.ofSeconds(10)).nextSeq();
      }
      long stopped = System.nanoTime();
      assertThat(s.waitFor(Duration.ofSeconds(20))).contains(ProcessExit.exited(0));
      assertThat(Duration.ofNanos(System.nanoTime() - stopped)).isLessThan(Duration.ofSeconds(5));
      assertThat(drain(s, 0)[ProcessStream.STDOUT.ordinal()]).isEqualTo(total);
    }
  }

  @Test
  void theDrainEndsWhileAReaderHoldsTheOutputs() throws Exception {
    // The leader exits at once; a background sleep keeps the pipes open, so the reader polls them
    // in slices until the 2 s drain ends, the tree is killed and the loop cuts the outputs.
    long start = System.nanoTime();
    try (ProcessSession s =
        runner.start(ProcessSpec.pipes(List.of("sh", "-c", "sleep 60 & echo started")))) {
      long[] perStream = drain(s, 0);
      assertThat(perStream[ProcessStream.STDOUT.ordinal()]).isEqualTo("started\n".length());
      assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(0));
    }
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isBetween(Duration.ofMillis(1_900), Duration.ofSeconds(5));
  }

  @Test
  void closingWakesAReaderThatHoldsTheOutputsAndLeavesNothing() throws Exception {
    EventLoop loop = EventLoop.shared();
    int registrations = loop.registrationCount();
    long fds = OpenFds.settled(); // idle tree cgroups keep files open: not counted
    for (int i = 0; i < 20; i++) {
      ProcessSession s = runner.start(ProcessSpec.pipes(List.of("sleep", "30")));
      Thread reader =
          Thread.ofPlatform()
              .start(
                  () -> {
                    try {
                      s.read(0, MIB, Duration.ofSeconds(30));
                    } catch (Exception expected) {
                      // closed while waiting
                    }
                  });
      Thread.sleep(20);
      s.close();
      reader.join(5_000);
      assertThat(reader.isAlive()).isFalse();
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while ((loop.registrationCount() != registrations || OpenFds.settled() != fds)
        && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(loop.registrationCount()).isEqualTo(registrations);
    assertThat(OpenFds.settled()).isEqualTo(fds);
  }

  @Test
  void manyShortSessionsAllReachTheirEnd() throws Exception {
    // The end of a short session often comes while its reader pulls (without the log's lock): a
    // reader that then waited without looking again missed the end and waited forever.
    for (int i = 0; i < 300; i++) {
      try (ProcessSession s =
          runner.start(ProcessSpec.pipes(List.of("head", "-c", "1", "/dev/zero")))) {
        assertThat(drain(s, 0)[ProcessStream.STDOUT.ordinal()]).isEqualTo(1);
        assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(0));
      }
    }
  }

  @Test
  void aPtySessionIsReadTheSameWay() throws Exception {
    try (ProcessSession s =
        runner.start(
            ProcessSpec.terminal(List.of("head", "-c", Integer.toString(4 * MIB), "/dev/zero"))
                .withOptions(log(16L * MIB)))) {
      assertThat(drain(s, 0)[ProcessStream.TTY.ordinal()]).isEqualTo(4L * MIB);
    }
  }

  @Test
  void twoReadersOfOneSessionTakeTurnsAndBothGetEverything() throws Exception {
    // Both platform threads want the outputs; the one turned away retries (or waits for the
    // other's appends) and neither may miss a byte or hang. A pause in the middle lets one of them
    // hold the outputs in a poll while the other is turned away.
    String script =
        "head -c " + 16 * MIB + " /dev/zero; sleep 0.2; head -c " + 16 * MIB + " /dev/zero";
    try (ProcessSession s =
            runner.start(
                ProcessSpec.pipes(List.of("sh", "-c", script)).withOptions(log(64L * MIB)));
        var threads = Executors.newFixedThreadPool(2)) {
      var first = threads.submit(() -> drain(s, 0));
      var second = threads.submit(() -> drain(s, 0));
      assertThat(first.get()[ProcessStream.STDOUT.ordinal()]).isEqualTo(32L * MIB);
      assertThat(second.get()[ProcessStream.STDOUT.ordinal()]).isEqualTo(32L * MIB);
    }
  }

  @Test
  void virtualThreadsWaitForTheLoop() throws Exception {
    try (ProcessSession s =
            runner.start(
                ProcessSpec.pipes(List.of("head", "-c", Integer.toString(8 * MIB), "/dev/zero"))
                    .withOptions(log(16L * MIB)));
        var threads = Executors.newVirtualThreadPerTaskExecutor()) {
      long[] perStream = threads.submit(() -> drain(s, 0)).get();
      assertThat(perStream[ProcessStream.STDOUT.ordinal()]).isEqualTo(8L * MIB);
    }
  }
}
