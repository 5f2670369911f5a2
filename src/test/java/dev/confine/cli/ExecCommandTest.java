package dev.confine.cli;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.EnvPolicy;
import dev.confine.ExecOptions;
import dev.confine.ExecRequest;
import dev.confine.ExecResult;
import dev.confine.ResourceLimits;
import dev.confine.SandboxException;
import dev.confine.SandboxException.Kind;
import dev.confine.linux.confinement.ThreadNamespaces;
import dev.confine.linux.sys.Users;
import dev.confine.testing.FakeRunner;
import dev.confine.testing.HostRequirements;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class ExecCommandTest {
  private final FakeRunner fake = new FakeRunner();
  private String factoryRoot;
  private long factoryMaxOutput = -1;
  private byte[] stdinSeen; // what the fake read of a stdin stream while it "ran"

  /** Makes the fake read the stdin stream during the exec, as a runner would, and exit 0. */
  private void readStdinWhileRunning() {
    fake.respondWith(
        r -> {
          try {
            InputStream in = r.options().stdinStream();
            stdinSeen = in == null ? null : in.readAllBytes();
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
          return ExecResult.ofExit(0);
        });
  }

  /** What one run of the CLI did. */
  private record Run(int status, byte[] out, String err) {
    String outText() {
      return new String(out, UTF_8);
    }
  }

  private Run run(String... args) {
    return run(new byte[0], args);
  }

  private Run run(byte[] stdin, String... args) {
    return run(
        (root, max) -> {
          factoryRoot = root;
          factoryMaxOutput = max;
          return fake;
        },
        stdin,
        args);
  }

  private static Run run(RunnerFactory factory, byte[] stdin, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            args,
            new ByteArrayInputStream(stdin),
            new PrintStream(out, true, UTF_8),
            new PrintStream(err, true, UTF_8),
            factory);
    return new Run(status, out.toByteArray(), err.toString(UTF_8));
  }

  // ---- options into ExecOptions ----

  @Test
  void everyOptionMapsIntoExecOptions(@TempDir Path tmp) throws IOException {
    readStdinWhileRunning();
    Path input = tmp.resolve("in.bin");
    byte[] bytes = {0, 1, (byte) 0xff, '\n'};
    Files.write(input, bytes);

    Run r =
        run(
            "exec",
            "--root",
            "/srv/work",
            "-C",
            "sub/dir",
            "--timeout",
            "1m30s",
            "--env-allow",
            "PATH",
            "--env-allow=HOME",
            "--env",
            "A=1",
            "--env",
            "B=x=y",
            "--stdin-file",
            input.toString(),
            "--max-output",
            "64k",
            "--memory",
            "1.5GiB",
            "--cpu-millicores",
            "500",
            "--cpu-throttle",
            "250",
            "--max-processes",
            "32",
            "--",
            "make",
            "test");

    assertThat(r.status()).isZero();
    Map<String, String> inject = new LinkedHashMap<>();
    inject.put("A", "1");
    inject.put("B", "x=y");
    ExecOptions got = fake.lastRequest().options();
    assertThat(stdinSeen).isEqualTo(bytes); // the file, streamed to the runner as it ran
    assertThat(got.stdoutStream()).isNotNull(); // streamed to ours, as env would
    assertThat(got.stderrStream()).isNotNull();
    ExecOptions expected =
        ExecOptions.builder()
            .workDir("sub/dir")
            .stdinStream(got.stdinStream())
            .stdoutStream(got.stdoutStream())
            .stderrStream(got.stderrStream())
            .timeout(Duration.ofSeconds(90))
            .env(EnvPolicy.allow("PATH", "HOME").withInject(inject))
            .resources(
                ResourceLimits.builder()
                    .maxOutputBytes(65536)
                    .memoryBytes(1610612736L)
                    .cpuMillicores(500)
                    .cpuThrottleMillicores(250)
                    .maxProcesses(32)
                    .build())
            .build();
    assertThat(fake.lastRequest()).isEqualTo(ExecRequest.of("make", List.of("test"), expected));
    assertThat(fake.callCount()).isEqualTo(1);
    assertThat(factoryRoot).isEqualTo("/srv/work");
    assertThat(factoryMaxOutput).isEqualTo(65536);
  }

  @Test
  void withoutOptionsTheDefaultsApplyAndTheRootIsTheCurrentDirectory() {
    Run r = run("exec", "true");
    assertThat(r.status()).isZero();
    ExecOptions options = fake.lastRequest().options();
    assertThat(fake.lastRequest())
        .isEqualTo(
            ExecRequest.of(
                "true",
                List.of(),
                ExecOptions.builder()
                    .stdoutStream(options.stdoutStream())
                    .stderrStream(options.stderrStream())
                    .build()));
    assertThat(options.stdoutStream()).isNotNull();
    assertThat(options.stdin()).isNull(); // the child reads end of file, not our stdin
    assertThat(options.env().inheritsAll()).isTrue();
    assertThat(factoryRoot).isEqualTo(Path.of("").toAbsolutePath().toString());
    assertThat(factoryMaxOutput).isZero();
  }

  @Test
  void aRelativeRootIsMadeAbsolute() {
    run("exec", "--root", "some/dir", "true");
    assertThat(factoryRoot).isEqualTo(Path.of("some/dir").toAbsolutePath().toString());
  }

  @Test
  void clearEnvInheritsNothing() {
    run("exec", "--clear-env", "--env", "X=1", "--", "env");
    assertThat(fake.lastRequest().options().env())
        .isEqualTo(new EnvPolicy(List.of(), Map.of("X", "1")));
  }

  @Test
  void clearEnvWithAnAllowListIsJustTheList() {
    run("exec", "--clear-env", "--env-allow", "PATH", "--", "env");
    assertThat(fake.lastRequest().options().env()).isEqualTo(EnvPolicy.allow("PATH"));
    run("exec", "--env-allow", "PATH", "--clear-env", "--", "env");
    assertThat(fake.lastRequest().options().env()).isEqualTo(EnvPolicy.allow("PATH"));
  }

  @Test
  void theLastEnvAssignmentWinsAndEmptyValuesAreKept() {
    run("exec", "--env", "A=1", "--env", "B=", "--env", "A=2", "--", "env");
    EnvPolicy env = fake.lastRequest().options().env();
    assertThat(env.allow()).isNull();
    assertThat(env.inject()).containsExactly(Map.entry("B", ""), Map.entry("A", "2"));
  }

  @Test
  void timeoutZeroMeansNone() {
    run("exec", "--timeout", "0", "--", "true");
    assertThat(fake.lastRequest().options().hasTimeout()).isFalse();
  }

  @Test
  void stdinFileDashHandsOurOwnStdinOverUnread() {
    readStdinWhileRunning();
    byte[] bytes = {'h', 'i', 0, (byte) 0x80};
    run(bytes, "exec", "--stdin-file", "-", "--", "cat");
    assertThat(fake.lastRequest().options().stdin()).isNull();
    assertThat(stdinSeen).isEqualTo(bytes); // nothing was read before the exec
  }

  @Test
  void aStdinFileIsOpenedOnlyWhenTheExecReadsIt(@TempDir Path tmp) throws IOException {
    Path file = Files.writeString(tmp.resolve("in"), "late");
    fake.respondWith(
        r -> {
          try {
            // Replaced after the command line was checked and before the exec read it.
            Files.writeString(file, "fresh");
            return ExecResult.of(
                0, new String(r.options().stdinStream().readAllBytes(), UTF_8), "");
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
    Run r = run("exec", "--stdin-file", file.toString(), "--", "cat");
    assertThat(r.outText()).isEqualTo("fresh");
  }

  /**
   * Gives "first\n", then, before "second\n" and the end, waits for the child to say it read the
   * first line: a child can only say so if its input is streamed, not read whole before it starts.
   */
  private static final class Conversation extends java.io.InputStream {
    private final Path seen;
    private int step;
    volatile boolean childAnsweredFirst;

    Conversation(Path seen) {
      this.seen = seen;
    }

    @Override
    public int read() {
      throw new UnsupportedOperationException();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      String next;
      switch (step++) {
        case 0 -> next = "first\n";
        case 1 -> {
          long deadline = System.nanoTime() + 10_000_000_000L;
          while (!childAnsweredFirst && System.nanoTime() < deadline) {
            childAnsweredFirst =
                Files.exists(seen) && Files.readString(seen, UTF_8).equals("first\n");
            try {
              Thread.sleep(10);
            } catch (InterruptedException e) {
              throw new java.io.InterruptedIOException();
            }
          }
          next = "second\n";
        }
        default -> {
          return -1;
        }
      }
      byte[] bytes = next.getBytes(UTF_8);
      System.arraycopy(bytes, 0, b, off, bytes.length);
      return bytes.length;
    }
  }

  @Test
  void aChildReadingLineByLineSeesItsInputBeforeTheInputEnds(@TempDir Path tmp) {
    Conversation in = new Conversation(tmp.resolve("seen"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status =
        Main.run(
            new String[] {
              "exec",
              "--root",
              tmp.toString(),
              "--stdin-file",
              "-",
              "--",
              "sh",
              "-c",
              "read a; echo \"$a\" > seen; read b; echo \"$a+$b\""
            },
            in,
            new PrintStream(out, true, UTF_8),
            new PrintStream(new ByteArrayOutputStream(), true, UTF_8),
            Main.BACKEND);
    assertThat(status).isZero();
    assertThat(in.childAnsweredFirst).isTrue();
    assertThat(out.toString(UTF_8)).isEqualTo("first+second\n");
  }

  @Test
  void anEmptyStdinFileIsAnEmptyPipeNotNoStdin(@TempDir Path tmp) throws IOException {
    readStdinWhileRunning();
    Path empty = Files.createFile(tmp.resolve("empty"));
    run("exec", "--stdin-file", empty.toString(), "--", "cat");
    assertThat(fake.lastRequest().options().hasStdin()).isTrue();
    assertThat(stdinSeen).isEmpty();
  }

  // ---- argument separation ----

  @Test
  void doubleDashSeparatesTheCommandFromOurOptions() {
    run("exec", "--", "ls", "-la");
    assertThat(fake.lastRequest().command()).isEqualTo("ls");
    assertThat(fake.lastRequest().args()).containsExactly("-la");
  }

  @Test
  void argumentsThatLookLikeOptionsAfterTheCommandPassVerbatim() {
    List<String> tail =
        List.of("--json", "--root", "/", "-C", "x", "--", "--help", "@/etc/passwd", "-");
    String[] args =
        Stream.concat(Stream.of("exec", "--timeout", "5s", "--", "grep"), tail.stream())
            .toArray(String[]::new);
    Run r = run(args);
    assertThat(r.status()).isZero();
    assertThat(r.out()).isEmpty(); // --json went to grep, not to us
    assertThat(fake.lastRequest().command()).isEqualTo("grep");
    assertThat(fake.lastRequest().args()).isEqualTo(tail);
    assertThat(factoryRoot).isNotEqualTo("/");
  }

  @Test
  void theCommandEndsOurOptionsEvenWithoutDoubleDash() {
    run("exec", "--clear-env", "ls", "-la", "--json", "--", "x");
    assertThat(fake.lastRequest().command()).isEqualTo("ls");
    assertThat(fake.lastRequest().args()).containsExactly("-la", "--json", "--", "x");
    assertThat(fake.lastRequest().options().env()).isEqualTo(EnvPolicy.none());
  }

  @Test
  void atFilesAreNotExpanded() {
    run("exec", "cat", "@/etc/hostname");
    assertThat(fake.lastRequest().args()).containsExactly("@/etc/hostname");
  }

  // ---- plain output and exit status ----

  @Test
  void theChildsExitCodePassesThrough() {
    fake.enqueue(ExecResult.ofExit(3));
    assertThat(run("exec", "false").status()).isEqualTo(3);
  }

  @Test
  void aSignalledChildGives128PlusTheSignal() {
    fake.enqueue(ExecResult.builder().signal(9).build());
    fake.enqueue(ExecResult.builder().signal(15).build());
    assertThat(run("exec", "sleep", "9").status()).isEqualTo(137);
    assertThat(run("exec", "sleep", "9").status()).isEqualTo(143);
  }

  @Test
  void outputBytesAreWrittenRawToTheMatchingStream() {
    byte[] stdout = {'a', 0, (byte) 0xff, (byte) 0xc3, '\r', '\n'};
    byte[] stderr = {(byte) 0xfe, 'e', '\n'};
    fake.enqueue(ExecResult.builder().exitCode(1).stdout(stdout).stderr(stderr).build());
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status =
        Main.run(
            new String[] {"exec", "x"},
            new ByteArrayInputStream(new byte[0]),
            new PrintStream(out),
            new PrintStream(err),
            (root, max) -> fake);
    assertThat(status).isEqualTo(1);
    assertThat(out.toByteArray()).isEqualTo(stdout);
    assertThat(err.toByteArray()).isEqualTo(stderr);
  }

  @Test
  void truncationIsNotedOnStderrAfterTheOutput() {
    fake.enqueue(
        ExecResult.of(0, "12345", "ab").toBuilder()
            .stdoutTruncated(true)
            .stderrTruncated(true)
            .build());
    Run r = run("exec", "--max-output", "5", "yes");
    assertThat(r.status()).isZero();
    assertThat(r.outText()).isEqualTo("12345");
    assertThat(r.err())
        .isEqualTo(
            "ab"
                + "confine: stdout truncated at 5 bytes\n"
                + "confine: stderr truncated at 5 bytes\n"); // streamed: cut at the cap
  }

  static Stream<Arguments> statusOfEachKind() {
    return EnumSet.allOf(Kind.class).stream()
        .map(
            k ->
                Arguments.of(
                    k,
                    switch (k) {
                      case TIMEOUT -> 124;
                      case NOT_FOUND -> 127;
                      case FORBIDDEN -> 126;
                      default -> 125;
                    }));
  }

  @ParameterizedTest
  @MethodSource("statusOfEachKind")
  void eachErrorKindHasItsStatusAndOneMessageLine(Kind kind, int status) {
    fake.enqueueFailure(new SandboxException(kind, "sandbox: it went wrong"));
    Run r = run("exec", "cmd");
    assertThat(r.status()).isEqualTo(status);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).isEqualTo("confine: sandbox: it went wrong\n");
  }

  @ParameterizedTest
  @EnumSource(
      value = Kind.class,
      names = {"TIMEOUT", "BUDGET_EXCEEDED", "ABORTED"})
  void partialOutputIsWrittenBeforeTheErrorMessage(Kind kind) {
    ExecResult partial =
        ExecResult.builder()
            .signal(9)
            .stdout("partial".getBytes(UTF_8))
            .stderr("warn\n".getBytes(UTF_8))
            .stdoutTruncated(true)
            .build();
    fake.enqueueFailure(new SandboxException(kind, "sandbox: stopped", null, partial));
    Run r = run("exec", "--timeout", "1s", "slow");
    assertThat(r.status()).isEqualTo(kind == Kind.TIMEOUT ? 124 : 125);
    assertThat(r.outText()).isEqualTo("partial");
    assertThat(r.err())
        .isEqualTo("warn\nconfine: stdout truncated at 7 bytes\nconfine: sandbox: stopped\n");
  }

  @Test
  void theBuiltInBackendRunsRealProcessesWithTheDefaultCap() {
    Run r =
        run(Main.BACKEND, new byte[0], "exec", "--", "sh", "-c", "echo out; echo err >&2; exit 3");
    assertThat(r.status()).isEqualTo(3);
    assertThat(r.outText()).isEqualTo("out\n");
    assertThat(r.err()).isEqualTo("err\n");
    Run big = run(Main.BACKEND, new byte[0], "exec", "--", "head", "-c", "11000000", "/dev/zero");
    assertThat(big.out()).hasSize(10 << 20);
    assertThat(big.err()).isEqualTo("confine: stdout truncated at 10485760 bytes\n");
  }

  @Test
  void wallMsIsTheWholeCallTheDrainIncluded() {
    long start = System.nanoTime();
    Run r = run(Main.BACKEND, new byte[0], "exec", "--json", "--", "sh", "-c", "sleep 60 & echo x");
    double elapsedMs = (System.nanoTime() - start) / 1e6;
    assertThat(r.status()).isZero();
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\"wall_ms\":([0-9.]+),").matcher(r.outText());
    assertThat(m.find()).as(r.outText()).isTrue();
    assertThat(Double.parseDouble(m.group(1))).isBetween(2_000.0, elapsedMs);
    java.util.regex.Matcher child =
        java.util.regex.Pattern.compile("\"child_ms\":([0-9.]+),").matcher(r.outText());
    assertThat(child.find()).as(r.outText()).isTrue();
    // The child exited at once; the call then waited the 2 s drain for the background sleep.
    assertThat(Double.parseDouble(child.group(1)))
        .isLessThanOrEqualTo(Double.parseDouble(m.group(1)) - 2_000.0);
  }

  @Test
  void aMaxOutputTheJvmCannotHoldIsRefusedWhenCapturedAndRunsWhenStreamed(@TempDir Path tmp) {
    long limit = Math.min(Integer.MAX_VALUE - 8, Runtime.getRuntime().maxMemory() / 8);
    // Streamed (no --json), the output is not held and any cap runs.
    Run streamed = run(Main.BACKEND, new byte[0], "exec", "--max-output", "1t", "--", "echo", "hi");
    assertThat(streamed.status()).as(streamed.err()).isZero();
    assertThat(streamed.outText()).isEqualTo("hi\n");
    // Captured (--json), it would be held: refused in the JSON's error, and nothing runs.
    Run r =
        run(
            Main.BACKEND,
            new byte[0],
            "exec",
            "--json",
            "--root",
            tmp.toString(),
            "--max-output",
            "1t",
            "--",
            "touch",
            "ran");
    assertThat(r.status()).isZero();
    assertThat(r.err()).isEmpty();
    assertThat(r.outText())
        .contains("sandbox: exec touch: maxOutputBytes 1099511627776")
        .contains("at most " + limit + " bytes");
    assertThat(tmp.resolve("ran")).doesNotExist();
  }

  @Test
  void theBuiltInBackendHonoursMaxOutputAsTheRunnerDefault() {
    Run r = run(Main.BACKEND, new byte[0], "exec", "--max-output", "3", "--", "echo", "hello");
    assertThat(r.outText()).isEqualTo("hel");
  }

  @Test
  void confinedBoundsWritesToTheRootAndTheWritePaths(@TempDir Path tmp) throws IOException {
    Path root = Files.createDirectories(tmp.resolve("root"));
    Path extra = Files.createDirectories(tmp.resolve("extra"));
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Run r =
        run(
            Main.BACKEND,
            new byte[0],
            "exec",
            "--root",
            root.toString(),
            "--confined",
            "--write",
            extra.toString(),
            "--",
            "sh",
            "-c",
            "touch in " + extra + "/x && echo ok; touch " + outside + "/y || echo refused");
    assertThat(r.outText()).isEqualTo("ok\nrefused\n");
    assertThat(outside.resolve("y")).doesNotExist();
  }

  /**
   * {@code --bwrap}: the command runs inside bubblewrap (the host read-only, the root and the
   * {@code --write} paths writable, {@code /run} private under {@code --net deny}); a weakening
   * {@code --bwrap-flag} is refused before anything runs (125).
   */
  @Test
  void bwrapRunsTheCommandInsideBubblewrap(@TempDir Path tmp) throws IOException {
    HostRequirements.requireProgram("bwrap");
    Path root = Files.createDirectories(tmp.resolve("root"));
    Path extra = Files.createDirectories(tmp.resolve("extra"));
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Run r =
        run(
            Main.BACKEND,
            new byte[0],
            "exec",
            "--root",
            root.toString(),
            "--bwrap",
            "--bwrap-flag",
            "--die-with-parent",
            "--write",
            extra.toString(),
            "--net",
            "deny",
            "--",
            "sh",
            "-c",
            "touch in "
                + extra
                + "/x && echo ok; touch "
                + outside
                + "/y 2>/dev/null || echo"
                + " refused; ls -A /run | wc -l; cat /proc/1/comm");
    assertThat(r.outText()).as(r.err()).isEqualTo("ok\nrefused\n0\nbwrap\n");
    assertThat(outside.resolve("y")).doesNotExist();
    assertThat(extra.resolve("x")).exists();
    Run weakening =
        run(Main.BACKEND, new byte[0], "exec", "--bwrap", "--bwrap-flag", "--bind=/", "--", "true");
    assertThat(weakening.status()).isEqualTo(125);
    assertThat(weakening.err()).contains("\"--bind=/\" can weaken sandbox enforcement");
  }

  @Test
  void netDenyNeedsTheConfinedRunnerAndBlocksInetSockets() {
    Run local = run(Main.BACKEND, new byte[0], "exec", "--net", "deny", "--", "true");
    assertThat(local.status()).isEqualTo(125);
    assertThat(local.err()).contains("net policy DENY_ALL not supported");
    Run confined =
        run(
            Main.BACKEND,
            new byte[0],
            "exec",
            "--confined",
            "--rootless",
            "--net",
            "deny",
            "--",
            "python3",
            "-c",
            "import socket; socket.socket(socket.AF_UNIX); print('unix ok');"
                + " socket.socket(socket.AF_INET)");
    assertThat(confined.status()).isEqualTo(1);
    assertThat(confined.outText()).isEqualTo("unix ok\n");
    assertThat(confined.err()).contains("PermissionError");
    Run bad = run(Main.BACKEND, new byte[0], "exec", "--net", "maybe", "--", "true");
    assertThat(bad.status()).isEqualTo(2);
    assertThat(bad.err()).contains("unknown network mode \"maybe\"");
    Run write = run(Main.BACKEND, new byte[0], "exec", "--write", "/tmp", "--", "true");
    assertThat(write.status()).isEqualTo(2);
    assertThat(write.err()).contains("--write needs --confined");
    for (String flag : List.of("--rootless", "--read-only-host")) {
      Run r = run(Main.BACKEND, new byte[0], "exec", flag, "--", "true");
      assertThat(r.status()).isEqualTo(2);
      assertThat(r.err()).contains(flag + " needs --confined");
    }
    Run both =
        run(
            Main.BACKEND,
            new byte[0],
            "exec",
            "--confined",
            "--rootless",
            "--read-only-host",
            "--",
            "true");
    assertThat(both.status()).isEqualTo(2);
    assertThat(both.err())
        .contains("--read-only-host needs a private mount namespace, which --rootless rules out");
  }

  @Test
  void everyExitStatusOfTheHelpTableIsWhatHappens(@TempDir Path dir) throws IOException {
    Path notExecutable = Files.writeString(dir.resolve("script"), "#!/bin/sh\n");
    Map<Integer, List<String>> rows = new LinkedHashMap<>();
    rows.put(3, List.of("exec", "--", "sh", "-c", "exit 3"));
    rows.put(128 + 15, List.of("exec", "--", "sh", "-c", "kill -TERM $$"));
    rows.put(124, List.of("exec", "--timeout", "100ms", "--", "sleep", "5"));
    rows.put(125, List.of("exec", "--cgroup-parent", "/nonexistent/x", "--", "true"));
    rows.put(126, List.of("exec", "--", notExecutable.toString()));
    rows.put(127, List.of("exec", "--", "no-such-command-here"));
    rows.put(2, List.of("exec", "--no-such-option", "--", "true"));
    for (Map.Entry<Integer, List<String>> row : rows.entrySet()) {
      Run r = run(Main.BACKEND, new byte[0], row.getValue().toArray(String[]::new));
      assertThat(r.status()).as("%s: %s", row.getValue(), r.err()).isEqualTo(row.getKey());
    }
    String help = run(Main.BACKEND, new byte[0], "--help").outText();
    for (String code : List.of("128+N", "124", "125", "126", "127", "2 ")) {
      assertThat(help).as(code).contains("  " + code);
    }
    assertThat(run(Main.BACKEND, new byte[0], "exec", "--help").outText())
        .contains(ExitStatus.HELP.formatted().lines().toList().get(3));
  }

  @Test
  void withoutJsonTheOutputReachesOursWhileCmdRuns(@TempDir Path dir) throws Exception {
    Path gate = Files.createFile(dir.resolve("gate"));
    CountDownLatch firstLine = new CountDownLatch(1);
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    OutputStream watching =
        new OutputStream() {
          @Override
          public synchronized void write(int b) {
            got.write(b);
            if (got.toString(UTF_8).contains("first\n")) {
              firstLine.countDown();
            }
          }
        };
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Integer> status =
          pool.submit(
              () ->
                  Main.run(
                      new String[] {
                        "exec",
                        "--root",
                        dir.toString(),
                        "--",
                        "sh",
                        "-c",
                        "echo first; while [ -e gate ]; do sleep 0.01; done; echo second; exit 6"
                      },
                      new ByteArrayInputStream(new byte[0]),
                      new PrintStream(watching, true, UTF_8),
                      new PrintStream(err, true, UTF_8),
                      Main.BACKEND));
      assertThat(firstLine.await(30, TimeUnit.SECONDS))
          .as("the first line before CMD ends")
          .isTrue();
      assertThat(status.isDone()).isFalse();
      Files.delete(gate);
      assertThat(status.get(30, TimeUnit.SECONDS)).isEqualTo(6);
      assertThat(got.toString(UTF_8)).isEqualTo("first\nsecond\n");
      assertThat(err.toString(UTF_8)).isEmpty();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void refusalsOfTheHostExit125WithOneLine() {
    Run parent =
        run(
            Main.BACKEND,
            new byte[0],
            "exec",
            "--cgroup-parent",
            "/nonexistent/confine-parent",
            "--",
            "true");
    assertThat(parent.status()).isEqualTo(125);
    assertThat(parent.err().lines())
        .singleElement()
        .satisfies(
            l ->
                assertThat(l).contains("cgroup parent /nonexistent/confine-parent cannot be used"));
    Run outside = run(Main.BACKEND, new byte[0], "exec", "-C", "/", "--", "true");
    assertThat(outside.status()).as(outside.err()).isEqualTo(125);
    assertThat(outside.err()).contains("escapes root");
  }

  @Test
  void aTimeoutIsReportedAsItWasGiven() {
    Run r = run(Main.BACKEND, new byte[0], "exec", "--timeout", "1ns", "--", "sleep", "5");
    assertThat(r.status()).isEqualTo(124);
    assertThat(r.err()).contains("(timeout 1ns)");
  }

  @Test
  void userNamesAndNumbersAreResolvedAndBadOnesAreUsageErrors() {
    BackendOptions.UserConverter c = new BackendOptions.UserConverter();
    assertThat(c.convert("root")).isEqualTo(new Users.Ids(0, 0));
    assertThat(c.convert("0")).isEqualTo(new Users.Ids(0, 0));
    assertThat(c.convert("nobody:0")).isEqualTo(new Users.Ids(65534, 0));
    assertThat(c.convert("4242:4343")).isEqualTo(new Users.Ids(4242, 4343));
    for (String bad : List.of("no-such-user-x", "4242", "root:no-such-group-x", ":0", "root:")) {
      Run r = run(Main.BACKEND, new byte[0], "exec", "--confined", "--user", bad, "--", "true");
      assertThat(r.status()).as(bad).isEqualTo(2);
      assertThat(r.err()).as(bad).contains("--user");
    }
    Run unconfined = run(Main.BACKEND, new byte[0], "exec", "--user", "nobody", "--", "true");
    assertThat(unconfined.status()).isEqualTo(2);
    assertThat(unconfined.err()).contains("--user needs --confined");
  }

  @Test
  @Tag("root")
  void asRootUserRunsTheCommandAsThatUser() {
    HostRequirements.requireRoot();
    Run r =
        run(
            Main.BACKEND,
            new byte[0],
            "exec",
            "--root",
            "/tmp",
            "--confined",
            "--user",
            "nobody",
            "--",
            "id",
            "-u");
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.outText()).isEqualTo("65534\n");
  }

  /** A loopback HTTP origin answering "ok" to everything, started. */
  private static com.sun.net.httpserver.HttpServer okOrigin() throws IOException {
    com.sun.net.httpserver.HttpServer origin =
        com.sun.net.httpserver.HttpServer.create(
            new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 10);
    origin.createContext(
        "/",
        ex -> {
          ex.sendResponseHeaders(200, 2);
          ex.getResponseBody().write("ok".getBytes(UTF_8));
          ex.close();
        });
    origin.start();
    return origin;
  }

  @Test
  @Tag("root")
  void asRootNetAllowListReachesOnlyTheAllowedHostsThroughTheProxy(@TempDir Path tmp)
      throws IOException {
    HostRequirements.requireRoot();
    HostRequirements.require(ThreadNamespaces.networkAvailability());
    HostRequirements.requireProgram("curl");
    com.sun.net.httpserver.HttpServer origin = okOrigin();
    try {
      int port = origin.getAddress().getPort();
      Run r =
          run(
              Main.BACKEND,
              new byte[0],
              "exec",
              "--root",
              tmp.toString(),
              "--confined",
              "--net",
              "allow-list",
              "--allow-host",
              "127.0.0.1:" + port,
              "--deny-host",
              "denied.test",
              "--",
              "sh",
              "-c",
              "curl -sS --max-time 10 http://127.0.0.1:"
                  + port
                  + "/; echo;"
                  + " curl -sS -o /dev/null -w '%{http_code}' --max-time 10 http://denied.test/");
      assertThat(r.status()).as(r.err()).isZero();
      assertThat(r.outText()).isEqualTo("ok\n403");
    } finally {
      origin.stop(0);
    }
  }

  /**
   * Rootless (and so as nobody too): --net allow-list through the connect supervisor, a program
   * that ignores the proxy variables decided transparently, a listed unix socket reachable.
   */
  @Test
  @Tag("confinement")
  void rootlessNetAllowListGoesThroughTheSupervisor(@TempDir Path tmp) throws Exception {
    HostRequirements.require(dev.confine.linux.confinement.ConnectSupervisor.availability());
    HostRequirements.requireProgram("curl");
    com.sun.net.httpserver.HttpServer origin = okOrigin();
    Path sockets = Files.createTempDirectory("confine-cli-unix-");
    var unix = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX);
    try {
      Path socket = sockets.resolve("s.sock");
      unix.bind(java.net.UnixDomainSocketAddress.of(socket));
      int port = origin.getAddress().getPort();
      Run r =
          run(
              Main.BACKEND,
              new byte[0],
              "exec",
              "--root",
              tmp.toString(),
              "--confined",
              "--rootless",
              "--net",
              "allow-list",
              "--allow-host",
              "127.0.0.1:" + port,
              "--unix-socket",
              socket.toString(),
              "--",
              "sh",
              "-c",
              "curl -sS --max-time 10 http://127.0.0.1:"
                  + port
                  + "/; echo; curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:"
                  + port
                  + "/; echo; curl -sS --max-time 1 --unix-socket "
                  + socket
                  + " http://x/ 2>&1 | grep -c 'Permission denied'; true");
      assertThat(r.status()).as(r.err()).isZero();
      // The listed socket is connected to (nobody answers there: curl times out, not EACCES).
      assertThat(r.outText()).isEqualTo("ok\nok\n0\n");
    } finally {
      unix.close();
      Files.deleteIfExists(sockets.resolve("s.sock"));
      Files.deleteIfExists(sockets);
      origin.stop(0);
    }
  }

  @Test
  @Tag("root")
  void asRootNetDenyIsAPrivateNetworkNamespaceAndTheHostCanBeReadOnly(@TempDir Path tmp)
      throws IOException {
    HostRequirements.requireRoot();
    HostRequirements.require(
        ThreadNamespaces.mountAvailability().and(ThreadNamespaces.networkAvailability()));
    Run net =
        run(
            Main.BACKEND,
            new byte[0],
            "exec",
            "--root",
            tmp.toString(),
            "--confined",
            "--net",
            "deny",
            "--",
            "sh",
            "-c",
            "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    assertThat(net.outText()).isEqualTo("lo\n");
    Run rootless =
        run(
            Main.BACKEND,
            new byte[0],
            "exec",
            "--root",
            tmp.toString(),
            "--confined",
            "--rootless",
            "--net",
            "deny",
            "--",
            "sh",
            "-c",
            "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    assertThat(rootless.outText().lines().toList())
        .isEqualTo(
            Files.readString(Path.of("/proc/thread-self/net/dev"))
                .lines()
                .skip(2)
                .map(l -> l.substring(0, l.indexOf(':')).strip())
                .toList());

    Path outside = Files.writeString(Files.createDirectories(tmp.resolve("out")).resolve("f"), "");
    Run readOnly =
        run(
            Main.BACKEND,
            new byte[0],
            "exec",
            "--root",
            Files.createDirectories(tmp.resolve("root")).toString(),
            "--confined",
            "--read-only-host",
            "--",
            "sh",
            "-c",
            "touch in && chmod 600 " + outside);
    assertThat(readOnly.status()).isEqualTo(1);
    assertThat(readOnly.err()).contains("Read-only file system");
    assertThat(tmp.resolve("root/in")).exists();
  }

  @Test
  void aRunnerBugIsAnInternalErrorWithoutAStackTrace() {
    fake.enqueueFailure(new IllegalStateException("boom"));
    Run r = run("exec", "x");
    assertThat(r.status()).isEqualTo(125);
    assertThat(r.err())
        .isEqualTo("confine: internal error: java.lang.IllegalStateException: boom\n");
  }

  @Test
  void anEmptyCommandIsRefusedByTheRunner() {
    Run r = run("exec", "--", "");
    assertThat(r.status()).isEqualTo(125);
    assertThat(r.err()).startsWith("confine: sandbox: command must not be empty");
  }

  // ---- --json ----

  @Test
  void jsonOfASuccess() {
    fake.enqueue(
        ExecResult.of(3, "out \"q\"\n", "err\t\u0001").toBuilder()
            .wallTime(Duration.ofNanos(12_345_678))
            .build());
    Run r = run("exec", "--json", "--", "x");
    assertThat(r.status()).isZero();
    assertThat(r.err()).isEmpty();
    assertThat(r.outText())
        .isEqualTo(
            "{\"exit_code\":3,\"signal\":null,\"stdout\":\"out \\\"q\\\"\\n\","
                + "\"stderr\":\"err\\t\\u0001\",\"stdout_truncated\":false,"
                + "\"stderr_truncated\":false,\"wall_ms\":12.346,\"child_ms\":0,\"error\":null"
                + ",\"usage\":{\"peak_memory_bytes\":null,\"cpu_user_ms\":null,\"cpu_system_ms\":null,\"pids_limit_hit\":false}}\n");
  }

  @Test
  void jsonOfAnErrorWithAPartialResult() {
    ExecResult partial =
        ExecResult.builder()
            .signal(9)
            .stdout("so far".getBytes(UTF_8))
            .wallTime(Duration.ofSeconds(1))
            .build();
    fake.enqueueFailure(new SandboxException(Kind.TIMEOUT, "sandbox: timed out", null, partial));
    Run r = run("exec", "--json", "--timeout", "1s", "--", "sleep", "10");
    assertThat(r.status()).isZero();
    assertThat(r.err()).isEmpty();
    assertThat(r.outText())
        .isEqualTo(
            "{\"exit_code\":-1,\"signal\":9,\"stdout\":\"so far\",\"stderr\":\"\","
                + "\"stdout_truncated\":false,\"stderr_truncated\":false,\"wall_ms\":1000,\"child_ms\":0,"
                + "\"error\":{\"kind\":\"TIMEOUT\",\"message\":\"sandbox: timed out\"}"
                + ",\"usage\":{\"peak_memory_bytes\":null,\"cpu_user_ms\":null,\"cpu_system_ms\":null,\"pids_limit_hit\":false}}\n");
  }

  @Test
  void jsonOfAnErrorBeforeStart() {
    Run r = run(Main.BACKEND, new byte[0], "exec", "--json", "--", "no-such-program-confine");
    assertThat(r.status()).isZero();
    assertThat(r.err()).isEmpty();
    assertThat(r.outText())
        .isEqualTo(
            "{\"exit_code\":-1,\"signal\":null,\"stdout\":\"\",\"stderr\":\"\","
                + "\"stdout_truncated\":false,\"stderr_truncated\":false,\"wall_ms\":0,\"child_ms\":0,"
                + "\"error\":{\"kind\":\"NOT_FOUND\",\"message\":\"sandbox: exec"
                + " no-such-program-confine: executable file not found in $PATH\"}"
                + ",\"usage\":{\"peak_memory_bytes\":null,\"cpu_user_ms\":null,\"cpu_system_ms\":null,\"pids_limit_hit\":false}}\n");
  }

  @Test
  void jsonDoesNotPrintTruncationNotes() {
    fake.enqueue(ExecResult.builder().signal(6).stdoutTruncated(true).build());
    Run r = run("exec", "--json", "x");
    assertThat(r.status()).isZero();
    assertThat(r.err()).isEmpty();
    assertThat(r.outText()).contains("\"signal\":6").contains("\"stdout_truncated\":true");
  }

  // ---- usage errors ----

  static Stream<Arguments> usageErrors() {
    return Stream.of(
        Arguments.of(List.of("exec", "--bogus", "--", "true"), "unknown option: '--bogus'"),
        Arguments.of(List.of("exec", "-x", "true"), "unknown option: '-x'"),
        Arguments.of(
            List.of("exec", "--timeout", "5x", "--", "true"),
            "invalid value for option '--timeout': unknown unit \"x\" in duration \"5x\""),
        Arguments.of(List.of("exec", "--timeout", "5", "true"), "missing unit in duration \"5\""),
        Arguments.of(
            List.of("exec", "--timeout", "-1s", "true"), "duration \"-1s\" must not be negative"),
        Arguments.of(
            List.of("exec", "--timeout", "1e3s", "true"), "unknown unit \"e\" in duration"),
        Arguments.of(List.of("exec", "--timeout"), "missing required parameter for option"),
        Arguments.of(
            List.of("exec", "--max-output", "1x", "true"),
            "invalid value for option '--max-output': unknown unit \"x\""),
        Arguments.of(
            List.of("exec", "--max-output", "-1", "true"), "size \"-1\" must not be negative"),
        Arguments.of(List.of("exec", "--memory", "lots", "true"), "invalid size \"lots\""),
        // Issue 15 finding 6: a cap no program starts in (4 KiB aborted the JVM) is refused.
        Arguments.of(
            List.of("exec", "--memory", "4k", "--", "true"),
            "--memory 4096 is below the smallest memory cap, 1048576 bytes (1 MiB)"),
        Arguments.of(
            List.of("exec", "--memory", "1", "--", "true"),
            "--memory 1 is below the smallest memory cap, 1048576 bytes (1 MiB)"),
        Arguments.of(
            List.of("exec", "--memory", "8k", "--", "true"),
            "--memory 8192 is below the smallest memory cap, 1048576 bytes (1 MiB)"),
        Arguments.of(
            List.of("exec", "--cpu-throttle", "-5", "true"), "\"-5\" must not be negative"),
        Arguments.of(
            List.of("exec", "--cpu-millicores", "-5", "true"), "\"-5\" must not be negative"),
        Arguments.of(
            List.of("exec", "--max-processes", "many", "true"), "\"many\" is not a whole number"),
        Arguments.of(List.of("exec"), "missing required parameter: 'CMD'"),
        Arguments.of(List.of("exec", "--"), "missing required parameter: 'CMD'"),
        Arguments.of(List.of("exec", "--json", "--clear-env"), "missing required parameter"),
        Arguments.of(
            List.of("exec", "--env", "FOO", "--", "true"),
            "--env \"FOO\" is not of the form NAME=VALUE"),
        Arguments.of(
            List.of("exec", "--env", "=x", "--", "true"), "--env \"=x\" has an empty NAME"),
        Arguments.of(
            List.of("exec", "--env", "X\nY=1", "--", "true"),
            "--env \"X\\nY=1\": NAME \"X\\nY\" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)"),
        Arguments.of(
            List.of("exec", "--env", "1A=x", "--", "true"),
            "--env \"1A=x\": NAME \"1A\" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)"),
        Arguments.of(
            List.of("exec", "--env", "A-B=x", "--", "true"), "NAME \"A-B\" is not a variable name"),
        Arguments.of(
            List.of("exec", "--env-allow", "PATH ", "--", "true"),
            "--env-allow \"PATH \" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)"),
        Arguments.of(
            List.of("exec", "--clear-env", "--env-allow", "", "--", "true"),
            "--env-allow \"\" is not a variable name"),
        Arguments.of(
            List.of("exec", "--json", "--stdin-file", "/no/such/file", "--", "cat"),
            "cannot read --stdin-file \"/no/such/file\": no such file"),
        Arguments.of(
            List.of("exec", "--stdin-file", "/", "--", "cat"),
            "cannot read --stdin-file \"/\": is a directory"),
        Arguments.of(
            List.of("exec", "--stdin-file", "a\0b", "--", "cat"),
            "cannot read --stdin-file \"a\\u0000b\": Nul character not allowed"),
        Arguments.of(
            List.of("exec", "--write", "/tmp", "--", "true"),
            "--write needs --confined or --bwrap"),
        Arguments.of(
            List.of("exec", "--bwrap-flag", "--level-prefix", "--", "true"),
            "--bwrap-flag needs --bwrap"),
        Arguments.of(
            List.of("exec", "--bwrap", "--confined", "--", "true"),
            "--confined and --bwrap are two backends: choose one"),
        Arguments.of(
            List.of("exec", "--bwrap", "--rootless", "--", "true"), "--rootless needs --confined"),
        Arguments.of(List.of("exec", "--rootless", "--", "true"), "--rootless needs --confined"),
        Arguments.of(
            List.of("exec", "--read-only-host", "--", "true"), "--read-only-host needs --confined"),
        Arguments.of(List.of("exec", "--user", "0", "--", "true"), "--user needs --confined"),
        Arguments.of(List.of("exec", "--audit", "-", "--", "true"), "--audit needs --confined"),
        Arguments.of(
            List.of("exec", "--net", "bogus", "--", "true"),
            "invalid value for option '--net': unknown network mode \"bogus\" (use default, deny,"
                + " allow-list or proxy)"),
        Arguments.of(
            List.of("exec", "--allow-host", "example.com", "--", "true"),
            "--allow-host needs --net allow-list or --net proxy"),
        Arguments.of(
            List.of("exec", "--net", "deny", "--deny-host", "example.com", "--", "true"),
            "--deny-host needs --net allow-list or --net proxy"),
        Arguments.of(
            List.of("exec", "--net", "allow-list", "--upstream", "http://p:1", "--", "true"),
            "--upstream needs --net proxy"),
        Arguments.of(
            List.of("exec", "--unix-socket", "/run/x.sock", "--", "true"),
            "--unix-socket needs --net allow-list or --net proxy"),
        Arguments.of(
            List.of("exec", "--net", "deny", "--mitm", "--", "true"),
            "--mitm needs --net allow-list or --net proxy"),
        Arguments.of(
            List.of("exec", "--net", "allow-list", "--unix-socket", "x.sock", "--", "true"),
            "--unix-socket \"x.sock\" is not an absolute path"),
        Arguments.of(
            List.of("exec", "--net", "allow-list", "--allow-host", "a.example:99999", "--", "true"),
            "invalid value for option '--allow-host' (HOST[:PORT]): invalid port in \"a.example:99999\""),
        Arguments.of(
            List.of("exec", "--caps", "bogus", "--", "true"),
            "invalid value for option '--caps': unknown caps mechanism \"bogus\""),
        Arguments.of(
            List.of("exec", "--confined", "--user", "no-such-user-here", "--", "true"),
            "invalid value for option '--user': no user named \"no-such-user-here\""));
  }

  @ParameterizedTest
  @MethodSource("usageErrors")
  void usageErrorsAreOneLineWithTheHintAndStatus2(List<String> args, String message) {
    Run r = run(args.toArray(String[]::new));
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err().lines().toList())
        .singleElement()
        .satisfies(
            line ->
                assertThat(line)
                    .startsWith("confine: ")
                    .contains(message)
                    .endsWith(" (try 'confine exec --help')"));
    assertThat(r.err())
        .doesNotContain("Exception")
        .doesNotContain("cannot convert")
        .doesNotContain("\tat ");
    assertThat(fake.callCount()).isZero();
  }

  @Test
  void noSubcommandPrintsTheUsageWithStatus2() {
    Run r = run();
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).startsWith("Usage: confine").contains("exec");
  }

  @Test
  void anUnknownSubcommandIsAUsageError() {
    Run r = run("frobnicate", "x");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("confine: unknown command 'frobnicate' (try 'confine --help')\n");
  }

  @Test
  void anUnknownTopLevelOptionIsAUsageError() {
    Run r = run("--bogus");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("confine: unknown option: '--bogus' (try 'confine --help')\n");
  }

  // ---- help and version ----

  @Test
  void helpAndVersion() {
    Run top = run("--help");
    assertThat(top.status()).isZero();
    assertThat(top.outText()).startsWith("Usage: confine").contains("exec");

    Run exec = run("exec", "--help");
    assertThat(exec.status()).isZero();
    assertThat(exec.outText())
        .startsWith("Usage: confine exec [OPTIONS] [--] CMD [ARGS...]")
        .contains("--stdin-file")
        .contains("stdin is empty")
        .contains("124")
        .contains("--json");
    assertThat(fake.callCount()).isZero();

    // The pom's version, as the build wrote it.
    String version = "confine " + Version.number() + "\n";
    assertThat(Version.number()).matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
    assertThat(run("--version").outText()).isEqualTo(version);
    assertThat(run("exec", "--version").outText()).isEqualTo(version);
    assertThat(run("-V").status()).isZero();
  }
}
