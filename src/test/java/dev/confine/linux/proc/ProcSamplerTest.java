package dev.confine.linux.proc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcSamplerTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final long MIB = 1L << 20;

  @Test
  void fiftySleepsUnderOneShellAreAllMembers() throws Exception {
    try (SpawnedTree tree =
        SpawnedTree.shell("for i in $(seq 50); do sleep 600 & done; echo started; wait")) {
      tree.awaitStdout("started", WAIT);
      ProcSampler sampler = new ProcSampler(tree.pid());
      SpawnedTree.await(() -> sample(sampler).members() == 51, WAIT, "51 members");
      ProcSampler.Sample s = sampler.sample();
      assertThat(s.members()).isEqualTo(51);
      assertThat(s.rssBytes()).isGreaterThan(51 * 4096L);
      // The children walk alone finds them all as well: none of them is an orphan.
      assertThat(new ProcSampler(tree.pid(), 0).sample().members()).isEqualTo(51);
    }
  }

  @Test
  void aDoubleForkedOrphanInTheSessionIsFoundByTheScan() throws Exception {
    // The subshell starts a sleep and exits before any sample: the sleep is re-parented outside
    // the tree, so no children file leads to it; only its session does.
    try (SpawnedTree tree =
        SpawnedTree.shell("sh -c 'sleep 600 & echo orphan $!'; echo ready; exec sleep 600")) {
      String out = tree.awaitStdout("ready", WAIT);
      int orphan = Integer.parseInt(out.lines().findFirst().orElseThrow().split(" ")[1]);
      SpawnedTree.await(() -> parentOf(orphan) != tree.pid(), WAIT, "the orphan's re-parenting");

      ProcSampler walkOnly = new ProcSampler(tree.pid(), 0);
      for (int i = 0; i < 2 * ProcSampler.DEFAULT_SCAN_EVERY; i++) {
        assertThat(walkOnly.sample().members()).isEqualTo(1);
      }
      assertThat(walkOnly.isMember(orphan)).isFalse();

      ProcSampler scanning = new ProcSampler(tree.pid());
      for (int i = 1; i < ProcSampler.DEFAULT_SCAN_EVERY; i++) {
        assertThat(scanning.sample().members()).as("sample %d", i).isEqualTo(1);
      }
      assertThat(scanning.sample().members()).as("the first scan").isEqualTo(2);
      assertThat(scanning.isMember(orphan)).isTrue();
    }
  }

  @Test
  void whenTheLeaderIsGoneTheFirstSampleScansForItsOrphans() throws Exception {
    try (SpawnedTree tree = SpawnedTree.shell("sleep 600 & echo orphan $!")) {
      assertThat(tree.awaitExit(WAIT)).isTrue();
      String out = tree.awaitStdout("orphan", WAIT);
      int orphan = Integer.parseInt(out.strip().split(" ")[1]);
      ProcSampler sampler = new ProcSampler(tree.pid());
      assertThat(sampler.sample().members()).isEqualTo(1);
      assertThat(sampler.isMember(orphan)).isTrue();
      assertThat(new ProcSampler(tree.pid(), 0).sample().members()).isZero();
    }
  }

  @Test
  void aProcessOnceSeenStaysAMemberAfterItsParentExits() throws Exception {
    try (SpawnedTree tree =
        SpawnedTree.shell(
            "sh -c 'sleep 600 & echo child $!; sleep 1'; echo done; exec sleep 600")) {
      String out = tree.awaitStdout("child", WAIT);
      int child = Integer.parseInt(out.lines().findFirst().orElseThrow().split(" ")[1]);
      ProcSampler walkOnly = new ProcSampler(tree.pid(), 0);
      SpawnedTree.await(
          () -> sample(walkOnly) != null && walkOnly.isMember(child), WAIT, "the child seen");
      tree.awaitStdout("done", WAIT);
      SpawnedTree.await(() -> parentOf(child) != tree.pid(), WAIT, "the child's re-parenting");
      assertThat(parentOf(child)).isNotEqualTo(tree.pid());

      walkOnly.sample();
      assertThat(walkOnly.isMember(child)).as("tracked by identity").isTrue();
      ProcSampler fresh = new ProcSampler(tree.pid(), 0);
      fresh.sample();
      assertThat(fresh.isMember(child)).as("unreachable by the children walk").isFalse();
    }
  }

  @Test
  void residentMemoryOfA64MiBAllocationIsMeasured() throws Exception {
    try (SpawnedTree idle = python("print('ready', flush=True); time.sleep(60)");
        SpawnedTree big =
            python(
                "b = bytearray(b'\\x01') * (64 << 20); print('ready', flush=True);"
                    + " time.sleep(60)")) {
      idle.awaitStdout("ready", WAIT);
      big.awaitStdout("ready", WAIT);
      long base = new ProcSampler(idle.pid()).sample().rssBytes();
      long rss = new ProcSampler(big.pid()).sample().rssBytes();
      assertThat(base).isBetween(1 * MIB, 64 * MIB);
      assertThat(rss - base).isBetween(60 * MIB, 72 * MIB);
      assertThat(rss).isCloseTo(vmRssBytes(big.pid()), org.assertj.core.data.Offset.offset(MIB));
    }
  }

  @Test
  void cpuTimeOfABusyLoopGrows() throws Exception {
    try (SpawnedTree tree = SpawnedTree.shell("while :; do :; done")) {
      ProcSampler sampler = new ProcSampler(tree.pid());
      ProcSampler.Sample first = sampler.sample();
      TimeUnit.MILLISECONDS.sleep(500);
      ProcSampler.Sample second = sampler.sample();
      assertThat(second.cpuNanos() - first.cpuNanos())
          .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
      assertThat(second.cpuUserNanos()).isGreaterThan(first.cpuUserNanos());
      assertThat(second.members()).isEqualTo(1);
    }
  }

  @Test
  void cpuTimeOfReapedMembersIsKept() throws Exception {
    // A child burns ~0.5 s of CPU and is reaped by the shell, then the shell itself exits and is
    // reaped
    // by the engine: neither takes its time along.
    try (SpawnedTree tree =
        SpawnedTree.shell(
            "(i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done); echo burnt; exec sleep 600")) {
      ProcSampler sampler = new ProcSampler(tree.pid());
      sampler.sample();
      tree.awaitStdout("burnt", WAIT);
      ProcSampler.Sample burnt = sampler.sample();
      assertThat(burnt.cpuNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(250));
      assertThat(burnt.members()).isEqualTo(1);

      tree.execution().killGroup();
      assertThat(tree.awaitExit(WAIT)).isTrue();
      ProcSampler.Sample after = sampler.sample();
      assertThat(after.members()).isZero();
      assertThat(after.rssBytes()).isZero();
      assertThat(after.cpuNanos()).isGreaterThanOrEqualTo(burnt.cpuNanos());
    }
  }

  @Test
  void cpuTimeOfALeaderReapedByTheJvmAddsToWhatItsOrphanUses() throws Exception {
    // The leader burns a fixed amount of work, starts a child that burns as much, and exits; the
    // engine reaps it, so its time is in no member's cutime any more. The total must still hold
    // both bursts (a sampler that forgot the leader would stay at about one).
    String burn = "i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done";
    try (SpawnedTree tree = SpawnedTree.shell(burn + "; (" + burn + "; echo done) & echo forked")) {
      ProcSampler sampler = new ProcSampler(tree.pid());
      ProcSampler.Sample atFork = null;
      while (!tree.stdout().contains("done")) {
        ProcSampler.Sample s = sampler.sample();
        if (atFork == null && tree.stdout().contains("forked")) {
          atFork = s;
        }
        TimeUnit.MILLISECONDS.sleep(10);
      }
      assertThat(tree.awaitExit(WAIT)).isTrue();
      assertThat(atFork).isNotNull();
      ProcSampler.Sample end = sampler.sample();
      assertThat(end.cpuNanos()).isGreaterThanOrEqualTo(atFork.cpuNanos() * 3 / 2);
    }
  }

  @Test
  void aLeaderThatIsGoneSamplesAsAnEmptyTree() throws Exception {
    try (SpawnedTree tree = SpawnedTree.shell("exit 0")) {
      assertThat(tree.awaitExit(WAIT)).isTrue();
      ProcSampler.Sample s = new ProcSampler(tree.pid()).sample();
      assertThat(s).isEqualTo(new ProcSampler.Sample(0, 0, 0, 0));
    }
  }

  @Test
  void aCommandNameWithSpacesAndParenthesesIsParsed(@TempDir Path dir) throws Exception {
    Path odd = dir.resolve("a) (b c");
    Files.copy(Path.of("/bin/sleep"), odd, StandardCopyOption.COPY_ATTRIBUTES);
    try (SpawnedTree tree = SpawnedTree.exec(odd.toString(), "a) (b c", "600")) {
      ProcFiles files = new ProcFiles();
      ProcFiles.Stat stat = new ProcFiles.Stat();
      SpawnedTree.await(() -> commOf(tree.pid()).equals("a) (b c"), WAIT, "the exec");
      assertThat(files.readStat(tree.pid(), stat)).isTrue();
      assertThat(stat.ppid).isEqualTo((int) ProcessHandle.current().pid());
      assertThat(stat.session).isEqualTo(tree.pid());
      assertThat(stat.pgrp).isEqualTo(tree.pid());
      assertThat(stat.numThreads).isEqualTo(1);
      assertThat(stat.state).isIn('S', 'R');
    }
  }

  @Test
  void parsesTheFieldsAfterTheLastParenthesis() throws Exception {
    String line =
        "4242 (x) 7 (y)) Z 1 4242 4242 0 -1 4194560 10 0 0 0 1234 567 89 10 20 0 3 0 987654"
            + " 1000000 321 18446744073709551615\n";
    byte[] b = line.getBytes(StandardCharsets.US_ASCII);
    ProcFiles.Stat s = new ProcFiles.Stat();
    ProcFiles.parseStat(b, b.length, s);
    assertThat(s.state).isEqualTo('Z');
    assertThat(s.ppid).isEqualTo(1);
    assertThat(s.pgrp).isEqualTo(4242);
    assertThat(s.session).isEqualTo(4242);
    assertThat(s.utime).isEqualTo(1234);
    assertThat(s.stime).isEqualTo(567);
    assertThat(s.cutime).isEqualTo(89);
    assertThat(s.cstime).isEqualTo(10);
    assertThat(s.numThreads).isEqualTo(3);
    assertThat(s.startTime).isEqualTo(987654);
    assertThat(s.rssPages).isEqualTo(321);
  }

  @Test
  void aTruncatedStatLineIsAnError() {
    byte[] b = "1 (x) S 0 1 1 0".getBytes(StandardCharsets.US_ASCII);
    assertThatThrownBy(() -> ProcFiles.parseStat(b, b.length, new ProcFiles.Stat()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("short /proc stat line");
  }

  @Test
  void clockTicksAndPageSizeComeFromSysconf() {
    assertThat(ProcFiles.CLOCK_TICKS_PER_SECOND).isEqualTo(100);
    assertThat(ProcFiles.PAGE_SIZE).isEqualTo(4096);
  }

  @Test
  void listsEveryProcessAndThreads() throws Exception {
    ProcFiles files = new ProcFiles();
    PidList all = new PidList();
    files.listProcesses(all);
    int self = (int) ProcessHandle.current().pid();
    boolean found = false;
    for (int i = 0; i < all.size(); i++) {
      found |= all.get(i) == self;
    }
    assertThat(found).isTrue();
    PidList threads = new PidList();
    assertThat(files.listThreads(self, threads)).isTrue();
    assertThat(threads.size()).isGreaterThan(1); // a JVM always runs several threads
    // In a PID namespace whose session leader lives outside it (a container), the kernel
    // reports session 0; compare with the stat line read the JDK's way instead of assuming > 0.
    String stat = Files.readString(Path.of("/proc/self/stat"));
    String[] afterComm = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    assertThat(files.sessionOf(self)).isEqualTo(Integer.parseInt(afterComm[3]));
    assertThat(files.sessionOf(Integer.MAX_VALUE)).isEqualTo(-1);
    assertThat(files.listThreads(Integer.MAX_VALUE, threads)).isFalse();
  }

  // ---- issue 15, finding 14: what the sampler counts, and the tree it tracks ----

  @Test
  void mappedSharedMemoryOfAMemberIsCounted(@TempDir Path dir) throws Exception {
    // stat's rss is RssAnon + RssFile + RssShmem: touched MAP_SHARED memory, anonymous or a tmpfs
    // file, counts as the member's resident memory.
    Path shm = Files.createTempFile(Path.of("/dev/shm"), "confine-sampler-", ".bin");
    try (SpawnedTree idle = python("print('ready', flush=True); time.sleep(60)");
        SpawnedTree anon =
            python(
                "import mmap; m = mmap.mmap(-1, 64 << 20, mmap.MAP_SHARED); m.write(b'\\x01' *"
                    + " (64 << 20)); print('ready', flush=True); time.sleep(60)");
        SpawnedTree file =
            python(
                "import mmap; f = open('"
                    + shm
                    + "', 'r+b'); f.truncate(64 << 20); m = mmap.mmap(f.fileno(), 64 << 20);"
                    + " m.write(b'\\x01' * (64 << 20)); print('ready', flush=True);"
                    + " time.sleep(60)")) {
      idle.awaitStdout("ready", WAIT);
      anon.awaitStdout("ready", WAIT);
      file.awaitStdout("ready", WAIT);
      long base = new ProcSampler(idle.pid()).sample().rssBytes();
      assertThat(rssShmemBytes(anon.pid())).isGreaterThan(60 * MIB);
      assertThat(new ProcSampler(anon.pid()).sample().rssBytes() - base)
          .isBetween(60 * MIB, 72 * MIB);
      assertThat(new ProcSampler(file.pid()).sample().rssBytes() - base)
          .isBetween(60 * MIB, 72 * MIB);
    } finally {
      Files.deleteIfExists(shm);
    }
  }

  @Test
  void aTmpfsFileWrittenAndNotMappedIsNotCountedAsTheRowsSay(@TempDir Path dir) throws Exception {
    // The blind spot doctor states: pages of a tmpfs file written with write() belong to no
    // process in /proc. (A cgroup charges them; the sampler cannot.)
    Path shm = Files.createTempFile(Path.of("/dev/shm"), "confine-sampler-", ".bin");
    try (SpawnedTree tree =
        SpawnedTree.shell(
            "head -c 67108864 /dev/zero > " + shm + "; echo written; exec sleep 60")) {
      tree.awaitStdout("written", WAIT);
      assertThat(Files.size(shm)).isEqualTo(64 * MIB);
      assertThat(new ProcSampler(tree.pid()).sample().rssBytes()).isLessThan(16 * MIB);
    } finally {
      Files.deleteIfExists(shm);
    }
  }

  @Test
  void anOrphanInASessionAMemberMadeIsFound() throws Exception {
    // The member setsids and orphans a sleeper in its new session (the subshell exits at once, so
    // no children file leads to it): the scan finds it by the session the tree is known to have.
    try (SpawnedTree tree =
        SpawnedTree.shell(
            "setsid sh -c 'echo escapee $$; (sleep 600 & echo orphan $!); exec sleep 600' &"
                + " exec sleep 600")) {
      String out = tree.awaitStdout("orphan", WAIT);
      int escapee = pidAfter(out, "escapee");
      int orphan = pidAfter(out, "orphan");
      killAfter(escapee, orphan);
      // Its parent is the subshell, which exits at once: it is orphaned once no ancestor of it
      // descends from the escapee.
      SpawnedTree.await(
          () -> !descendsFrom(parentOf(orphan), escapee), WAIT, "the orphan's re-parenting");
      ProcSampler sampler = new ProcSampler(tree.pid());
      sampler.sample();
      assertThat(sampler.isMember(escapee)).as("the setsid child, by ancestry").isTrue();
      assertThat(sampler.isMember(orphan)).isFalse();
      assertThat(sampler.lastLook()).isTrue();
      assertThat(sampler.isMember(orphan)).as("found in the escapee's session").isTrue();
      sampler.killTree();
      for (int pid : new int[] {tree.pid(), escapee, orphan}) {
        SpawnedTree.await(() -> !alive(pid), WAIT, "pid " + pid + " dead");
      }
      assertThat(sampler.lastLook()).isFalse();
    }
  }

  @Test
  void aSessionAMemberMadeAfterItWasFirstSeenIsTracked(@TempDir Path dir) throws Exception {
    // Seen first in the leader's session, it calls setsid later: its session is tracked from the
    // sample that sees it as a session leader. It waits on a fifo (a builtin read, so no process of
    // its own) until the test has sampled it, however loaded the machine is.
    Path gate = dir.resolve("gate");
    assertThat(new ProcessBuilder("mkfifo", gate.toString()).start().waitFor()).isZero();
    try (SpawnedTree tree =
        SpawnedTree.shell(
            "sh -c 'read go < "
                + gate
                + "; exec setsid sh -c \"echo escapee \\$\\$; (sleep 600 &"
                + " echo orphan \\$!); exec sleep 600\"' & exec sleep 600")) {
      ProcSampler sampler = new ProcSampler(tree.pid());
      SpawnedTree.await(() -> sample(sampler).members() == 2, WAIT, "the child seen");
      Files.writeString(gate, "go\n");
      String out = tree.awaitStdout("orphan", WAIT);
      int orphan = pidAfter(out, "orphan");
      killAfter(pidAfter(out, "escapee"), orphan);
      assertThat(sampler.lastLook()).isTrue();
      assertThat(sampler.isMember(orphan)).isTrue();
      sampler.killTree();
      SpawnedTree.await(() -> !alive(orphan), WAIT, "the orphan dead");
    }
  }

  private final java.util.List<Integer> toKill = new java.util.ArrayList<>();

  /** Processes outside the tree's group, which its close does not kill: killed after the test. */
  private void killAfter(int... pids) {
    for (int pid : pids) {
      toKill.add(pid);
    }
  }

  @org.junit.jupiter.api.AfterEach
  void killEscapees() {
    toKill.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
  }

  private static int pidAfter(String out, String word) {
    return out.lines()
        .filter(l -> l.startsWith(word + " "))
        .mapToInt(l -> Integer.parseInt(l.substring(word.length() + 1).trim()))
        .findFirst()
        .orElseThrow();
  }

  private static boolean alive(int pid) {
    String stat = read("/proc/" + pid + "/stat");
    return !stat.isEmpty() && stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
  }

  private static long rssShmemBytes(int pid) {
    return read("/proc/" + pid + "/status")
            .lines()
            .filter(l -> l.startsWith("RssShmem:"))
            .mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", "")))
            .findFirst()
            .orElseThrow()
        * 1024;
  }

  private static ProcSampler.Sample sample(ProcSampler sampler) {
    try {
      return sampler.sample();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static SpawnedTree python(String body) {
    return SpawnedTree.exec("/usr/bin/python3", "python3", "-c", "import time\n" + body);
  }

  /**
   * Whether {@code pid} is {@code ancestor} or one of its descendants (false once either is gone).
   */
  private static boolean descendsFrom(int pid, int ancestor) {
    try {
      for (int p = pid; p > 1; p = parentOf(p)) {
        if (p == ancestor) {
          return true;
        }
      }
    } catch (RuntimeException gone) {
      // a process on the way exited: what it was part of is no longer an ancestry
    }
    return false;
  }

  private static int parentOf(int pid) {
    String stat = read("/proc/" + pid + "/stat");
    return Integer.parseInt(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[1]);
  }

  private static String commOf(int pid) {
    return read("/proc/" + pid + "/comm").strip();
  }

  private static long vmRssBytes(int pid) {
    return read("/proc/" + pid + "/status")
            .lines()
            .filter(l -> l.startsWith("VmRSS:"))
            .mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", "")))
            .findFirst()
            .orElseThrow()
        * 1024;
  }

  private static String read(String path) {
    try {
      return Files.readString(Path.of(path));
    } catch (IOException e) {
      return "";
    }
  }
}
