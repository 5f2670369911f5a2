package dev.confine.linux.child;

import static dev.confine.linux.child.ChildTests.PATIENCE;
import static dev.confine.linux.child.ChildTests.sh;
import static dev.confine.linux.child.SessionProcess.STDERR;
import static dev.confine.linux.child.SessionProcess.STDOUT;
import static dev.confine.linux.child.SessionProcess.TTY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.Engine;
import dev.confine.linux.child.ChildTests.Proc;
import dev.confine.linux.libc.LibC;
import dev.confine.linux.loop.EventLoop;
import dev.confine.linux.spawn.ExitStatus;
import dev.confine.linux.spawn.SpawnSpec;
import dev.confine.linux.spawn.Spawner;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.tree.TreeGuard;
import dev.confine.testing.HostRequirements;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link SessionProcess} at the engine level: a child on pipes or a pty, watched by the loop, its
 * output reported by stream to a {@link SessionProcess.Listener}, its input written, and one {@link
 * ChildOutcome} at the end, after the last output, with nothing of it left behind.
 */
@Timeout(180)
class SessionProcessTest {
  private static final long SHORT_DRAIN = TimeUnit.MILLISECONDS.toNanos(200);

  /**
   * A listener that keeps every chunk in order with its stream, and notes what breaks the contract:
   * output after the end, a second end.
   */
  static final class Recorder implements SessionProcess.Listener {
    record Chunk(int stream, String text) {}

    private final List<Chunk> chunks = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private int endedCalls;
    private ChildOutcome end;

    @Override
    public synchronized long output(
        int stream, SessionProcess.Source source, ByteBuffer buffer, int maxReads) {
      if (endedCalls > 0) {
        violations.add("output on stream " + stream + " after ended()");
      }
      long total = 0;
      for (int i = 0; i < maxReads; i++) {
        long n = source.read(buffer);
        if (n <= 0) {
          break; // nothing now (-EAGAIN), or the end (0, -EIO on a pty)
        }
        byte[] b = new byte[(int) n];
        buffer.get(0, b);
        chunks.add(new Chunk(stream, new String(b, StandardCharsets.ISO_8859_1)));
        total += n;
        if (n < buffer.capacity()) {
          break;
        }
      }
      return total;
    }

    @Override
    public synchronized void ended(ChildOutcome e) {
      endedCalls++;
      end = e;
    }

    synchronized List<Chunk> chunks() {
      return List.copyOf(chunks);
    }

    synchronized String text(int stream) {
      return chunks.stream()
          .filter(c -> c.stream() == stream)
          .map(Chunk::text)
          .collect(Collectors.joining());
    }

    synchronized int endedCalls() {
      return endedCalls;
    }

    synchronized ChildOutcome end() {
      return end;
    }

    synchronized List<String> violations() {
      return List.copyOf(violations);
    }

    /** Waits until {@code stream}'s output contains {@code text}. */
    void awaitText(int stream, String text) throws InterruptedException {
      ChildTests.await(
          () -> text(stream).contains(text), "output " + stream + " to contain " + text);
    }

    /**
     * The index of the first chunk of {@code stream} from which its output contains {@code text}.
     */
    synchronized int indexOf(int stream, String text) {
      StringBuilder seen = new StringBuilder();
      for (int i = 0; i < chunks.size(); i++) {
        if (chunks.get(i).stream() == stream) {
          seen.append(chunks.get(i).text());
          if (seen.indexOf(text) >= 0) {
            return i;
          }
        }
      }
      return -1;
    }
  }

  private final List<SessionProcess> sessions = new ArrayList<>();
  private final List<Proc> strays = new ArrayList<>();
  private TreeMap<Integer, String> fdsBefore;
  private int registrationsBefore;

  @BeforeEach
  void engine() {
    HostRequirements.require(NativeAccess.availability());
    registrationsBefore = EventLoop.shared().registrationCount();
    fdsBefore = ChildTests.fds();
  }

  /** Every test: its sessions ended, their input closed, and no fd or loop registration left. */
  @AfterEach
  void nothingLeft() throws InterruptedException {
    for (SessionProcess p : sessions) {
      if (p.end() == null) {
        p.killTree(); // a test that failed with its session running
        p.awaitEnd(System.nanoTime() + PATIENCE.toNanos());
      }
      p.input().close(); // the input is its user's to close, also after the end
    }
    strays.forEach(Proc::kill);
    if (fdsBefore != null) {
      ChildTests.awaitNothingLeft(fdsBefore, registrationsBefore);
    }
  }

  private SessionProcess start(String script, boolean tty, long timeoutNanos, Recorder r) {
    SessionProcess p =
        Engine.startSession(sh(script, false), tty, 24, 80, TreeGuard.NONE, timeoutNanos, r);
    sessions.add(p);
    return p;
  }

  private SessionProcess startDraining(String script, long drainNanos, Recorder r) {
    SessionProcess p =
        SessionProcess.start(sh(script, false), false, 24, 80, TreeGuard.NONE, 0, drainNanos, r);
    sessions.add(p);
    return p;
  }

  /**
   * Waits for the end, then checks the listener's side of it: ended() once, with the same outcome,
   * no output after it, also once the loop ran whatever was queued by then.
   */
  private static ChildOutcome awaitEnd(SessionProcess p, Recorder r) throws InterruptedException {
    ChildOutcome end = p.awaitEnd(System.nanoTime() + PATIENCE.toNanos());
    assertThat(end).as("the session's end").isNotNull();
    flushLoop();
    assertThat(r.endedCalls()).as("ended() calls").isEqualTo(1);
    assertThat(r.end()).isSameAs(end);
    assertThat(p.end()).isSameAs(end);
    assertThat(r.violations()).isEmpty();
    return end;
  }

  /** Waits until the loop has run its queued tasks and every timer due by now. */
  private static void flushLoop() throws InterruptedException {
    EventLoop loop = EventLoop.shared();
    CountDownLatch ran = new CountDownLatch(1);
    loop.schedule(System.nanoTime(), () -> loop.execute(ran::countDown));
    assertThat(ran.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
  }

  private static String lines(String prefix, int n) {
    return IntStream.range(0, n).mapToObj(i -> prefix + i + "\n").collect(Collectors.joining());
  }

  @Test
  void aPipeSessionReportsEachStreamsOutputWhole() throws Exception {
    Recorder r = new Recorder();
    SessionProcess p =
        start(
            "i=0; while [ $i -lt 3000 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done",
            false,
            0,
            r);
    assertThat(p.tty()).isFalse();
    ChildOutcome end = awaitEnd(p, r);

    assertThat(end.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(end.exit()).isEqualTo(new ExitStatus(0, 0));
    assertThat(end.leftoversKilled()).isFalse();
    assertThat(r.text(STDOUT)).isEqualTo(lines("out", 3000));
    assertThat(r.text(STDERR)).isEqualTo(lines("err", 3000));
    assertThat(r.text(TTY)).isEmpty();
  }

  @Test
  void chunksOfBothStreamsArriveInTheOrderTheChildWroteThem() throws Exception {
    // Each write waits for an input that the test sends only once it saw the one before.
    Recorder r = new Recorder();
    SessionProcess p =
        start("echo first; read a; echo \"got $a\" >&2; read b; echo \"then $b\"", false, 0, r);
    r.awaitText(STDOUT, "first\n");
    p.input().write("one\n".getBytes(StandardCharsets.UTF_8));
    r.awaitText(STDERR, "got one\n");
    p.input().write("two\n".getBytes(StandardCharsets.UTF_8));
    ChildOutcome end = awaitEnd(p, r);

    assertThat(end.exit()).isEqualTo(new ExitStatus(0, 0));
    assertThat(r.text(STDOUT)).isEqualTo("first\nthen two\n");
    assertThat(r.text(STDERR)).isEqualTo("got one\n");
    int first = r.indexOf(STDOUT, "first\n");
    int got = r.indexOf(STDERR, "got one\n");
    int then = r.indexOf(STDOUT, "then two\n");
    assertThat(first).isLessThan(got);
    assertThat(got).isLessThan(then);
  }

  @Test
  void closingThePipeSessionsInputGivesItEndOfFile() throws Exception {
    Recorder r = new Recorder();
    SessionProcess p = start("cat; echo done", false, 0, r);
    p.input().write("hello\n".getBytes(StandardCharsets.UTF_8));
    r.awaitText(STDOUT, "hello\n");
    p.input().close();
    ChildOutcome end = awaitEnd(p, r);

    assertThat(end.exit()).isEqualTo(new ExitStatus(0, 0));
    assertThat(r.text(STDOUT)).isEqualTo("hello\ndone\n");
    assertThatThrownBy(() -> p.input().write(new byte[] {1}))
        .isInstanceOfSatisfying(
            ErrnoException.class, e -> assertThat(e.errno()).isEqualTo(LibC.EPIPE()));
  }

  @Test
  void aPtySessionEchoesInputResizesAndEndsAtTheEndOfFileCharacter() throws Exception {
    Recorder r = new Recorder();
    SessionProcess p =
        start("stty size; read a; echo \"read $a\"; read b; stty size; exec cat", true, 0, r);
    assertThat(p.tty()).isTrue();
    r.awaitText(TTY, "24 80\r\n");
    assertThat(p.input().controlChar(SessionInput.Control.INTERRUPT)).isEqualTo((byte) 0x03);
    assertThat(p.input().controlChar(SessionInput.Control.EOF)).isEqualTo((byte) 0x04);

    p.input().write("ping\n".getBytes(StandardCharsets.UTF_8));
    // The terminal echoes the line before the child reads it; its own output follows.
    r.awaitText(TTY, "ping\r\nread ping\r\n");

    p.input().resize(40, 100); // before the line that makes the child look
    p.input().write("x\n".getBytes(StandardCharsets.UTF_8));
    r.awaitText(TTY, "x\r\n40 100\r\n");

    p.input().write("meow\n".getBytes(StandardCharsets.UTF_8));
    r.awaitText(TTY, "meow\r\nmeow\r\n"); // the echo, then cat's copy
    p.input().type(SessionInput.Control.EOF);
    ChildOutcome end = awaitEnd(p, r);

    assertThat(end.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(end.exit()).isEqualTo(new ExitStatus(0, 0));
    assertThat(r.chunks()).allSatisfy(c -> assertThat(c.stream()).isEqualTo(TTY));
    assertThat(r.text(TTY))
        .isEqualTo("24 80\r\nping\r\nread ping\r\nx\r\n40 100\r\nmeow\r\nmeow\r\n");
  }

  @Test
  void terminateGroupEndsTheSessionWithSigterm() throws Exception {
    Recorder r = new Recorder();
    SessionProcess p = start("echo up; exec sleep 300", false, 0, r);
    r.awaitText(STDOUT, "up\n"); // the sleep runs (or is about to): SIGTERM ends either
    assertThat(p.terminateGroup()).isTrue();
    ChildOutcome end = awaitEnd(p, r);

    assertThat(end.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(end.exit()).isEqualTo(new ExitStatus(-1, LibC.SIGTERM()));
    assertThat(p.terminateGroup()).as("the group is gone").isFalse();
    assertThat(p.interruptGroup()).isFalse();
    assertThatThrownBy(() -> p.input().write(new byte[] {1}))
        .isInstanceOfSatisfying(
            ErrnoException.class, e -> assertThat(e.errno()).isEqualTo(LibC.EPIPE()));
  }

  @Test
  void interruptGroupEndsAPtySessionWithSigint() throws Exception {
    Recorder r = new Recorder();
    SessionProcess p = start("echo up; exec sleep 300", true, 0, r);
    r.awaitText(TTY, "up\r\n");
    assertThat(p.interruptGroup()).isTrue();
    ChildOutcome end = awaitEnd(p, r);
    assertThat(end.exit()).isEqualTo(new ExitStatus(-1, LibC.SIGINT()));
  }

  @Test
  void killTreeKillsEveryProcessOfTheGroup() throws Exception {
    Recorder r = new Recorder();
    SessionProcess p = start("sleep 300 & echo $!; exec sleep 300", false, 0, r);
    r.awaitText(STDOUT, "\n");
    Proc background = Proc.of(Integer.parseInt(r.text(STDOUT).trim()));
    strays.add(background);
    p.killTree();
    ChildOutcome end = awaitEnd(p, r);

    assertThat(end.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(end.exit()).isEqualTo(new ExitStatus(-1, LibC.SIGKILL()));
    background.awaitDead();
  }

  @Test
  void theTimeoutKillsTheTreeAndEndsTheSessionTimedOut() throws Exception {
    for (boolean tty : new boolean[] {false, true}) {
      Recorder r = new Recorder();
      SessionProcess p = start("exec sleep 300", tty, TimeUnit.MILLISECONDS.toNanos(300), r);
      ChildOutcome end = awaitEnd(p, r);
      assertThat(end.ending()).as("tty %s", tty).isEqualTo(ChildOutcome.Ending.TIMED_OUT);
      assertThat(end.exit()).isEqualTo(new ExitStatus(-1, LibC.SIGKILL()));
    }
  }

  @Test
  void aBackgroundProcessHoldingTheOutputIsKilledAfterTheDrain() throws Exception {
    Recorder r = new Recorder();
    long start = System.nanoTime();
    SessionProcess p = startDraining("sleep 300 & echo $!", SHORT_DRAIN, r);
    ChildOutcome end = awaitEnd(p, r);
    long took = System.nanoTime() - start;
    Proc background = Proc.of(Integer.parseInt(r.text(STDOUT).trim()));
    strays.add(background);

    assertThat(end.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
    assertThat(end.exit()).isEqualTo(new ExitStatus(0, 0));
    assertThat(end.leftoversKilled()).isTrue();
    assertThat(took)
        .isLessThan(
            SHORT_DRAIN + ChildLifecycle.SETTLE_AFTER_KILL_NANOS + TimeUnit.SECONDS.toNanos(20));
    background.awaitDead();
  }

  @Test
  void aChildThatExitedBeforeItsTimeoutEndsExitedWhileBackgroundOutputDrainsPastIt()
      throws Exception {
    // The leader exits at once; a background sleep holds the output past the timeout, within the
    // drain. An exec in the same spot ends EXITED (its deadline only bounds the wait for the exit),
    // and ChildOutcome says TIMED_OUT means the deadline passed first.
    for (long timeoutMillis = 1000; ; timeoutMillis *= 2) {
      Recorder r = new Recorder();
      long timeout = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
      SessionProcess p =
          SessionProcess.start(
              sh("sleep 300 & echo $!; exit 0", false),
              false,
              24,
              80,
              TreeGuard.NONE,
              timeout,
              timeout + TimeUnit.SECONDS.toNanos(2),
              r);
      sessions.add(p);
      ChildOutcome end = awaitEnd(p, r);
      if (!r.text(STDOUT).isEmpty()) {
        strays.add(Proc.of(Integer.parseInt(r.text(STDOUT).trim())));
      }
      if (!end.exit().equals(new ExitStatus(0, 0))) {
        // The timeout killed the leader before it exited: too slow a machine for this timeout.
        assertThat(timeoutMillis).as("a leader that exits at once, timeout").isLessThan(16_000);
        continue;
      }
      assertThat(end.ending()).isEqualTo(ChildOutcome.Ending.EXITED);
      assertThat(end.leftoversKilled()).isTrue();
      strays.getLast().awaitDead();
      return;
    }
  }

  @Test
  void manyShortSessionsEachEndOnceAfterAllTheirOutput() throws Exception {
    String expected = lines("", 2000); // what seq 0 1999 writes
    for (int i = 0; i < 40; i++) {
      boolean tty = i % 4 == 3;
      Recorder r = new Recorder();
      SessionProcess p = start("seq 0 1999", tty, 0, r);
      ChildOutcome end = awaitEnd(p, r);
      assertThat(end.exit()).as("session %d", i).isEqualTo(new ExitStatus(0, 0));
      assertThat(r.text(tty ? TTY : STDOUT))
          .as("session %d (tty %s)", i, tty)
          .isEqualTo(tty ? expected.replace("\n", "\r\n") : expected);
      p.input().close();
    }
  }

  @Test
  void aClientReadingOnItsOwnThreadGetsAllTheOutputInOrder() throws Exception {
    Recorder r = new Recorder();
    SessionProcess p = start("seq 0 199999; seq 0 9 >&2", false, 0, r);
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (p.end() == null) {
      assertThat(System.nanoTime() - deadline).as("the session's end").isNegative();
      SessionProcess.CallerRead got = p.readOnCaller(System.nanoTime() + PATIENCE.toNanos());
      if (got == SessionProcess.CallerRead.NONE) {
        p.awaitEnd(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10)); // the loop reads
      }
    }
    awaitEnd(p, r);
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    for (int i = 0; i < 200_000; i++) {
      expected.writeBytes((i + "\n").getBytes(StandardCharsets.UTF_8));
    }
    assertThat(r.text(STDOUT)).isEqualTo(expected.toString(StandardCharsets.UTF_8));
    assertThat(r.text(STDERR)).isEqualTo(lines("", 10));

    SessionProcess.CallerRead[] onVirtual = new SessionProcess.CallerRead[1];
    Thread.ofVirtual().start(() -> onVirtual[0] = p.readOnCaller(Long.MAX_VALUE)).join();
    assertThat(onVirtual[0]).isEqualTo(SessionProcess.CallerRead.NONE);
  }

  @Test
  void aListenerWhoseEndedThrowsStillLetsTheEndBeAwaited() throws Exception {
    Recorder inner = new Recorder();
    SessionProcess.Listener throwing =
        new SessionProcess.Listener() {
          @Override
          public long output(
              int stream, SessionProcess.Source source, ByteBuffer buffer, int maxReads) {
            return inner.output(stream, source, buffer, maxReads);
          }

          @Override
          public void ended(ChildOutcome end) {
            inner.ended(end);
            throw new IllegalStateException("listener bug");
          }
        };
    SessionProcess p =
        Engine.startSession(sh("echo hi", false), false, 24, 80, TreeGuard.NONE, 0, throwing);
    sessions.add(p);
    ChildOutcome end = awaitEnd(p, inner);
    assertThat(end.exit()).isEqualTo(new ExitStatus(0, 0));
    assertThat(inner.text(STDOUT)).isEqualTo("hi\n");

    Recorder next = new Recorder(); // the loop lives on
    assertThat(awaitEnd(start("echo again", false, 0, next), next).exit())
        .isEqualTo(new ExitStatus(0, 0));
    assertThat(next.text(STDOUT)).isEqualTo("again\n");
  }

  /** A guard that spawns as {@link TreeGuard#NONE} does and records what it was told. */
  private static final class RecordingGuard implements TreeGuard {
    private final List<String> calls = new ArrayList<>();

    @Override
    public synchronized Spawner.Spawned spawn(SpawnSpec spec) {
      calls.add(spec.terminal() == null ? "spawn on pipes" : "spawn on a terminal");
      return Spawner.spawn(spec);
    }

    @Override
    public synchronized void started(int pid) {
      calls.add("started " + pid);
    }

    @Override
    public synchronized void close() {
      calls.add("close");
    }

    synchronized List<String> calls() {
      return List.copyOf(calls);
    }
  }

  @Test
  void theSessionOwnsItsGuardAndClosesItAtTheEnd() throws Exception {
    for (boolean tty : new boolean[] {false, true}) {
      RecordingGuard guard = new RecordingGuard();
      Recorder r = new Recorder();
      SessionProcess p = Engine.startSession(sh("exit 0", false), tty, 24, 80, guard, 0, r);
      sessions.add(p);
      awaitEnd(p, r);
      assertThat(guard.calls())
          .containsExactly(
              tty ? "spawn on a terminal" : "spawn on pipes", "started " + p.pid(), "close");
    }
  }

  @Test
  void aFailedSpawnClosesTheGuardAndThePty() {
    // The fds (a pty's master among them) are compared after the test.
    for (boolean tty : new boolean[] {false, true}) {
      RecordingGuard guard = new RecordingGuard();
      SpawnSpec missing =
          new SpawnSpec("/nonexistent/program", List.of("program"), ChildTests.ENV, "/", false);
      assertThatThrownBy(() -> Engine.startSession(missing, tty, 24, 80, guard, 0, new Recorder()))
          .isInstanceOf(ErrnoException.class);
      assertThat(guard.calls())
          .containsExactly(tty ? "spawn on a terminal" : "spawn on pipes", "close");
    }
  }
}
