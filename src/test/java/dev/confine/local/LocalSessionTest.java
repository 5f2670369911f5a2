package dev.confine.local;

import static dev.confine.testing.SessionReads.readAll;
import static dev.confine.testing.SessionReads.readUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.ExecOptions;
import dev.confine.ProcessClosedException;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.SequenceGapException;
import dev.confine.host.HostSession;
import dev.confine.session.EventStream;
import dev.confine.session.OutputChunk;
import dev.confine.session.OutputRead;
import dev.confine.session.ProcessEvent;
import dev.confine.session.ProcessEventSource;
import dev.confine.session.ProcessExit;
import dev.confine.session.ProcessInfo;
import dev.confine.session.ProcessOutput;
import dev.confine.session.ProcessSession;
import dev.confine.session.ProcessSignal;
import dev.confine.session.ProcessSignaler;
import dev.confine.session.ProcessSpec;
import dev.confine.session.ProcessStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Sessions of the local runner, with real programs on real ptys and pipes. */
@Timeout(60)
class LocalSessionTest {
  @TempDir Path root;
  private LocalRunner runner;

  @BeforeEach
  void setUp() {
    runner = LocalRunner.create(root.toString());
  }

  private static ExecOptions env(Map<String, String> inject) {
    return ExecOptions.builder().env(dev.confine.EnvPolicy.inheritAll().withInject(inject)).build();
  }

  @Test
  void anInteractiveShellOnAPty() throws Exception {
    ProcessSpec spec =
        ProcessSpec.terminal(List.of("sh", "-i"))
            .withOptions(env(Map.of("PS1", "confine$ ", "ENV", "/dev/null")));
    try (ProcessSession s = runner.start(spec)) {
      long[] cursor = {0};
      readUntil(s, cursor, "confine$ ");
      s.write("tty; echo answer=$((6*7))\n".getBytes(StandardCharsets.UTF_8));
      String out = readUntil(s, cursor, "answer=42");
      assertThat(out).contains("/dev/pts/");
      s.write("exit 3\n".getBytes(StandardCharsets.UTF_8));
      ProcessExit exit = s.waitFor();
      assertThat(exit).isEqualTo(ProcessExit.exited(3));
      ProcessOutput all = s.read(0, 1 << 20);
      assertThat(all.chunks()).allMatch(c -> c.stream() == ProcessStream.TTY);
      assertThat(all.eof()).isTrue();
    }
  }

  @Test
  void resizeChangesWhatSttySees() throws Exception {
    try (ProcessSession s =
        runner.start(
            ProcessSpec.terminal(List.of("sh")).withSize(30, 100).withOptions(env(Map.of())))) {
      long[] cursor = {0};
      s.write("stty size\n".getBytes(StandardCharsets.UTF_8));
      readUntil(s, cursor, "30 100");
      s.resize(50, 132);
      s.write("stty size\n".getBytes(StandardCharsets.UTF_8));
      readUntil(s, cursor, "50 132");
      s.write("exit\n".getBytes(StandardCharsets.UTF_8));
      assertThat(s.waitFor().code()).isZero();
    }
  }

  @Test
  void aPtyDefaultsTo24By80() throws Exception {
    try (ProcessSession s = runner.start(ProcessSpec.terminal(List.of("stty", "size")))) {
      assertThat(readAll(s)).contains("24 80");
    }
  }

  @Test
  void interruptStopsTheForegroundJobButNotTheShell() throws Exception {
    ProcessSpec spec =
        ProcessSpec.terminal(List.of("sh", "-i"))
            .withOptions(env(Map.of("PS1", "p> ", "ENV", "/dev/null")));
    try (ProcessSession s = runner.start(spec)) {
      long[] cursor = {0};
      readUntil(s, cursor, "p> ");
      s.write("sleep 100\n".getBytes(StandardCharsets.UTF_8));
      readUntil(s, cursor, "sleep 100");
      Thread.sleep(300); // let sh start sleep in the foreground
      ProcessSignaler.of(s).orElseThrow().signal(ProcessSignal.INTERRUPT);
      // The terminal echoes ^C and the shell prompts again: only the foreground job died.
      String after = readUntil(s, cursor, "p> ");
      assertThat(after).contains("^C");
      s.write("echo still-$((6*7))\n".getBytes(StandardCharsets.UTF_8)); // not matched by the echo
      readUntil(s, cursor, "still-42");
      assertThat(s.exitValue()).isEmpty();
    }
  }

  @Test
  void interruptOnPipesSignalsTheGroup() throws Exception {
    try (ProcessSession s = runner.start(ProcessSpec.pipes(List.of("sleep", "30")))) {
      ProcessSignaler.of(s).orElseThrow().signal(ProcessSignal.INTERRUPT);
      ProcessExit exit = s.waitFor();
      assertThat(exit.reason()).isEqualTo(ProcessExit.Reason.SIGNALED);
      assertThat(exit.signal()).isEqualTo(2);
      assertThat(exit.code()).isEqualTo(-1);
      assertThatThrownBy(() -> ProcessSignaler.of(s).orElseThrow().signal(ProcessSignal.INTERRUPT))
          .isInstanceOf(ProcessClosedException.class);
    }
  }

  @Test
  void pipeSessionsTagStreamsAndSeeEndOfInput() throws Exception {
    try (ProcessSession s =
        runner.start(ProcessSpec.pipes(List.of("sh", "-c", "cat; echo done >&2")))) {
      s.write("hello\n".getBytes(StandardCharsets.UTF_8));
      s.write(new byte[0]);
      s.closeStdin();
      assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(0));
      ProcessOutput out = s.read(0, 1 << 20);
      assertThat(out.eof()).isTrue();
      assertThat(out.chunks())
          .extracting(OutputChunk::stream)
          .contains(ProcessStream.STDOUT, ProcessStream.STDERR);
      StringBuilder stdout = new StringBuilder();
      StringBuilder stderr = new StringBuilder();
      for (OutputChunk c : out.chunks()) {
        (c.stream() == ProcessStream.STDOUT ? stdout : stderr)
            .append(new String(c.data(), StandardCharsets.UTF_8));
      }
      assertThat(stdout).hasToString("hello\n");
      assertThat(stderr).hasToString("done\n");
      assertThatThrownBy(() -> s.resize(10, 10))
          .isInstanceOf(SandboxException.class)
          .extracting(e -> ((SandboxException) e).kind())
          .isEqualTo(Kind.NOT_AVAILABLE);
    }
  }

  @Test
  void aBufferReadTellsTheStreamsApartAndStreamsEveryByte() throws Exception {
    // 3 MiB of numbered lines on stdout, a marker on stderr in the middle: read through one small
    // buffer, the bytes arrive whole and in order, each read from one stream.
    String script = "seq 1 200000; echo middle >&2; sleep 0.1; seq 200001 400000; printf end >&2";
    try (ProcessSession s =
        runner.start(
            ProcessSpec.pipes(List.of("sh", "-c", script))
                .withOptions(
                    ExecOptions.builder()
                        .resources(ResourceLimits.builder().maxOutputBytes(64 << 20).build())
                        .build()))) {
      ByteBuffer buf = ByteBuffer.allocate(1000);
      StringBuilder stdout = new StringBuilder();
      StringBuilder stderr = new StringBuilder();
      long cursor = 0;
      while (true) {
        OutputRead r = s.read(cursor, buf.clear());
        assertThat(r.nextSeq()).isEqualTo(cursor + r.length());
        String text = new String(buf.array(), 0, r.length(), StandardCharsets.UTF_8);
        if (r.length() > 0) {
          (r.stream() == ProcessStream.STDOUT ? stdout : stderr).append(text);
        }
        cursor = r.nextSeq();
        if (r.eof()) {
          break;
        }
      }
      assertThat(stderr).hasToString("middle\nend");
      StringBuilder expected = new StringBuilder();
      for (int i = 1; i <= 400_000; i++) {
        expected.append(i).append('\n');
      }
      assertThat(stdout.toString()).isEqualTo(expected.toString());
      assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(0));
    }
  }

  @Test
  void aWriteAfterTheChildStoppedReadingFails() throws Exception {
    try (ProcessSession s = runner.start(ProcessSpec.pipes(List.of("true")))) {
      s.waitFor();
      assertThatThrownBy(() -> s.write(new byte[1 << 20]))
          .isInstanceOf(SandboxException.class)
          .hasMessageContaining("process write")
          .extracting(e -> ((SandboxException) e).kind())
          .isEqualTo(Kind.INTERNAL);
    }
  }

  @Test
  void terminateEndsAPoliteChildQuicklyAndAStubbornOneAfterTheGrace() throws Exception {
    try (ProcessSession polite = runner.start(ProcessSpec.pipes(List.of("sleep", "30")))) {
      polite.terminate();
      ProcessExit exit = polite.waitFor();
      assertThat(exit.reason()).isEqualTo(ProcessExit.Reason.TERMINATED);
      assertThat(exit.signal()).isEqualTo(15);
    }
    try (ProcessSession stubborn =
        runner.start(
            ProcessSpec.pipes(
                List.of("sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done")))) {
      readUntil(stubborn, new long[] {0}, "ready");
      long start = System.nanoTime();
      stubborn.terminate();
      ProcessExit exit = stubborn.waitFor();
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .isGreaterThanOrEqualTo(HostSession.TERMINATE_GRACE.minusMillis(50));
      assertThat(exit.reason()).isEqualTo(ProcessExit.Reason.TERMINATED);
      assertThat(exit.signal()).isEqualTo(9);
    }
  }

  @Test
  void aChildThatTrapsTermAndExitsIsAnOrdinaryExit() throws Exception {
    try (ProcessSession s =
        runner.start(
            ProcessSpec.pipes(
                List.of(
                    "sh", "-c", "trap 'exit 7' TERM; echo ready; while :; do sleep 1; done")))) {
      readUntil(s, new long[] {0}, "ready");
      s.terminate();
      assertThat(s.waitFor()).isEqualTo(ProcessExit.exited(7));
    }
  }

  @Test
  void theTimeoutKillsTheTree() throws Exception {
    ExecOptions opts = ExecOptions.builder().timeout(Duration.ofMillis(300)).build();
    try (ProcessSession s =
        runner.start(ProcessSpec.pipes(List.of("sleep", "30")).withOptions(opts))) {
      ProcessExit exit = s.waitFor();
      assertThat(exit.reason()).isEqualTo(ProcessExit.Reason.TIMED_OUT);
      assertThat(exit.code()).isEqualTo(-1);
      assertThat(exit.error().kind()).isEqualTo(Kind.TIMEOUT);
      assertThatThrownBy(exit::orThrow).isSameAs(exit.error());
    }
  }

  @Test
  void aNegativeWaitIsOverAtOnceNotEndless() throws Exception {
    try (ProcessSession s = runner.start(ProcessSpec.pipes(List.of("sleep", "30")))) {
      Duration negative = Duration.ofMillis(-5);
      long start = System.nanoTime();
      ProcessOutput out = s.read(0, 16, negative);
      assertThat(out.chunks()).isEmpty();
      assertThat(out.eof()).isFalse();
      assertThat(s.read(0, java.nio.ByteBuffer.allocate(16), negative).length()).isZero();
      assertThat(s.waitFor(negative)).isEmpty();
      // Each returns without waiting; a generous bound for a loaded machine.
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }
  }

  @Test
  void replayFromAnOldCursorAfterReconnecting() throws Exception {
    try (ProcessSession s =
        runner.start(
            ProcessSpec.pipes(List.of("sh", "-c", "for i in 1 2 3; do echo line$i; done")))) {
      s.waitFor();
      String first = readAll(s);
      assertThat(first).isEqualTo("line1\nline2\nline3\n");
      // A client that saw the first 6 bytes reconnects and resumes there.
      ProcessOutput rest = s.read(6, 1 << 20);
      assertThat(new String(rest.bytes(), StandardCharsets.UTF_8)).isEqualTo("line2\nline3\n");
      assertThat(rest.eof()).isTrue();
      assertThat(s.read(rest.nextSeq(), 10).chunks()).isEmpty();
      assertThatThrownBy(() -> s.read(-1, 10)).isInstanceOf(SequenceGapException.class);
      assertThatThrownBy(() -> s.read(1000, 10))
          .isInstanceOf(SandboxException.class)
          .extracting(e -> ((SandboxException) e).kind())
          .isEqualTo(Kind.VALIDATION);
    }
  }

  @Test
  void aBoundedLogDropsTheOldestOutput() throws Exception {
    ExecOptions opts =
        ExecOptions.builder()
            .resources(dev.confine.ResourceLimits.builder().maxOutputBytes(64 * 1024).build())
            .build();
    try (ProcessSession s =
        runner.start(
            ProcessSpec.pipes(List.of("head", "-c", String.valueOf(1 << 20), "/dev/zero"))
                .withOptions(opts))) {
      s.waitFor();
      assertThatThrownBy(() -> s.read(0, 10)).isInstanceOf(SequenceGapException.class);
      SequenceGapException gap = catchGap(s);
      ProcessOutput tail = s.read(gap.retainedFrom(), 1 << 20);
      assertThat(tail.nextSeq()).isEqualTo(1 << 20);
      assertThat(tail.eof()).isTrue();
      assertThat(tail.bytes().length).isLessThanOrEqualTo(64 * 1024 * 2);
    }
  }

  private static SequenceGapException catchGap(ProcessSession s) throws Exception {
    try {
      s.read(0, 10);
    } catch (SequenceGapException e) {
      return e;
    }
    throw new AssertionError("no gap");
  }

  @Test
  void aLaggingWatcherRecoversByReading() throws Exception {
    try (ProcessSession s = runner.start(ProcessSpec.pipes(List.of("cat")))) {
      EventStream events = ProcessEventSource.of(s).orElseThrow().watch();
      // One line at a time, each echoed before the next is sent: cat writes each separately, so
      // the log gets 300 chunks while the watcher takes none and falls behind.
      long[] cursor = {0};
      StringBuilder expected = new StringBuilder();
      for (int i = 0; i < 300; i++) {
        String line = "line" + i + "\n";
        expected.append(line);
        s.write(line.getBytes(StandardCharsets.UTF_8));
        readUntil(s, cursor, line);
      }
      ProcessEvent last = null;
      ProcessEvent e;
      StringBuilder seen = new StringBuilder();
      int taken = 0;
      while ((e = events.take()) != null) {
        taken++;
        last = e;
        if (e.type() == ProcessEvent.Type.OUTPUT) {
          seen.append(new String(e.chunk().data(), StandardCharsets.UTF_8));
        }
      }
      assertThat(taken).isEqualTo(256);
      assertThat(last.type()).isEqualTo(ProcessEvent.Type.LAG);
      assertThat(last.seq()).isEqualTo(seen.length());
      ProcessOutput rest = s.read(last.seq(), 1 << 20);
      seen.append(new String(rest.bytes(), StandardCharsets.UTF_8));
      assertThat(seen).hasToString(expected.toString());
    }
  }

  @Test
  void aWatcherSeesReplayThenLiveOutputThenExited() throws Exception {
    ProcessSession s = runner.start(ProcessSpec.pipes(List.of("cat")));
    try {
      s.write("one\n".getBytes(StandardCharsets.UTF_8));
      readUntil(s, new long[] {0}, "one");
      EventStream events = ProcessEventSource.of(s).orElseThrow().watch();
      ProcessEvent replay = events.take();
      assertThat(replay.type()).isEqualTo(ProcessEvent.Type.OUTPUT);
      assertThat(replay.seq()).isZero();
      s.write("two\n".getBytes(StandardCharsets.UTF_8));
      ProcessEvent live = events.take();
      assertThat(new String(live.chunk().data(), StandardCharsets.UTF_8)).isEqualTo("two\n");
      assertThat(live.seq()).isEqualTo(4);
      s.closeStdin();
      ProcessEvent exited = events.take();
      assertThat(exited.type()).isEqualTo(ProcessEvent.Type.EXITED);
      assertThat(exited.exit()).isEqualTo(ProcessExit.exited(0));
      s.close();
      assertThat(events.take().type()).isEqualTo(ProcessEvent.Type.CLOSED);
      assertThat(events.take()).isNull();
    } finally {
      s.close();
    }
  }

  @Test
  void closeKillsAndEveryLaterOperationIsRefused() throws Exception {
    ProcessSession s = runner.start(ProcessSpec.pipes(List.of("sleep", "30")));
    s.close();
    s.close(); // idempotent
    assertThat(s.waitFor().reason()).isEqualTo(ProcessExit.Reason.SIGNALED);
    assertThat(s.exitValue()).isPresent();
    assertThatThrownBy(() -> s.read(0, 1)).isInstanceOf(ProcessClosedException.class);
    assertThatThrownBy(() -> s.write(new byte[1])).isInstanceOf(ProcessClosedException.class);
    assertThatThrownBy(s::terminate).isInstanceOf(ProcessClosedException.class);
    assertThatThrownBy(s::closeStdin).isInstanceOf(ProcessClosedException.class);
    assertThatThrownBy(() -> s.resize(0, 1))
        .isInstanceOf(SandboxException.class)
        .extracting(e -> ((SandboxException) e).kind())
        .isEqualTo(Kind.VALIDATION);
    assertThatThrownBy(() -> s.resize(1, 1)).isInstanceOf(ProcessClosedException.class);
    assertThatThrownBy(() -> ProcessEventSource.of(s).orElseThrow().watch())
        .isInstanceOf(ProcessClosedException.class);
    assertThat(runner.list()).isEmpty();
  }

  @Test
  void aBlockedReaderWakesWhenTheSessionCloses() throws Exception {
    ProcessSession s = runner.start(ProcessSpec.pipes(List.of("sleep", "30")));
    Thread closer =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    Thread.sleep(200);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  s.close();
                });
    assertThatThrownBy(() -> s.read(0, 10)).isInstanceOf(ProcessClosedException.class);
    closer.join();
  }

  @Test
  void theRegistryListsTerminatesAndRefusesDuplicateIds() throws Exception {
    try (ProcessSession a = runner.start(ProcessSpec.pipes(List.of("sleep", "30")).withId("a"));
        ProcessSession b = runner.start(ProcessSpec.terminal(List.of("true")).withId("b"))) {
      assertThat(a.id()).isEqualTo("a");
      assertThatThrownBy(() -> runner.start(ProcessSpec.pipes(List.of("true")).withId("a")))
          .isInstanceOf(SandboxException.class)
          .extracting(e -> ((SandboxException) e).kind())
          .isEqualTo(Kind.CONFLICT);
      b.waitFor();
      List<ProcessInfo> list = runner.list();
      assertThat(list).extracting(ProcessInfo::id).containsExactly("a", "b");
      assertThat(list.get(0).running()).isTrue();
      assertThat(list.get(0).pid()).isEqualTo(a.pid());
      assertThat(list.get(1).running()).isFalse();
      assertThat(list.get(1).exit()).isEqualTo(ProcessExit.exited(0));
      runner.terminate("a");
      assertThat(a.exitValue().orElseThrow().reason()).isEqualTo(ProcessExit.Reason.TERMINATED);
      assertThatThrownBy(() -> runner.terminate("nope"))
          .isInstanceOf(SandboxException.class)
          .extracting(e -> ((SandboxException) e).kind())
          .isEqualTo(Kind.NOT_FOUND);
    }
    assertThat(runner.list()).isEmpty();
  }

  @Test
  void startFailuresAreClassifiedAsExecsAreAndReleaseTheId() {
    assertThatThrownBy(() -> runner.start(ProcessSpec.pipes(List.of("no-such-program-xyz"))))
        .isInstanceOf(SandboxException.class)
        .extracting(e -> ((SandboxException) e).kind())
        .isEqualTo(Kind.NOT_FOUND);
    ExecOptions deny = ExecOptions.builder().net(dev.confine.NetPolicy.denyAll()).build();
    assertThatThrownBy(
            () -> runner.start(ProcessSpec.terminal(List.of("true")).withOptions(deny).withId("x")))
        .isInstanceOf(SandboxException.class)
        .extracting(e -> ((SandboxException) e).kind())
        .isEqualTo(Kind.NOT_AVAILABLE);
    assertThat(runner.list()).isEmpty();
  }

  @Test
  void outputIsReadableAfterExitUntilClose() throws Exception {
    ProcessSession s = runner.start(ProcessSpec.terminal(List.of("echo", "kept")));
    s.waitFor();
    Thread.sleep(100);
    assertThat(readAll(s)).contains("kept");
    assertThat(readAll(s)).contains("kept");
    s.close();
    assertThatThrownBy(() -> s.read(0, 10)).isInstanceOf(ProcessClosedException.class);
  }

  @Test
  void aPtySessionCanWriteMoreThanThePtyBuffersWithoutLosingBytes() throws Exception {
    Path big = root.resolve("big");
    byte[] data = new byte[3 << 20];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) ('a' + i % 26);
    }
    Files.write(big, data);
    try (ProcessSession s = runner.start(ProcessSpec.terminal(List.of("cat", big.toString())))) {
      s.waitFor();
      ProcessOutput out = s.read(0, Integer.MAX_VALUE);
      assertThat(out.eof()).isTrue();
      // The terminal turns \n into \r\n; there is none in the data, so the bytes are exact.
      assertThat(out.bytes()).isEqualTo(data);
    }
  }
}
