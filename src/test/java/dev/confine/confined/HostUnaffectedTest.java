package dev.confine.confined;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.ExecOptions;
import dev.confine.ExecResult;
import dev.confine.NetPolicy;
import dev.confine.linux.confinement.ConfinementThreads;
import dev.confine.linux.confinement.Landlock;
import dev.confine.linux.confinement.SeccompFilter;
import dev.confine.linux.confinement.ThreadNamespaces;
import dev.confine.testing.HostNamespaces;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The confinement is per thread: after thousands of confined spawns, from the test thread and from
 * common-pool threads, the JVM's own threads can still open TCP sockets and write anywhere, and
 * stay in the host's network and mount namespaces with the working directory they had. As root the
 * spawns mix the namespace path (the default), the forced rootless path and, where a mount
 * namespace can be made, a read-only host; without root all of them are rootless.
 */
@Tag("confinement")
class HostUnaffectedTest {
  @TempDir Path dir;

  private static final ExecOptions DEFAULT =
      ExecOptions.builder().timeout(Duration.ofSeconds(30)).build();
  private static final ExecOptions DENY =
      ExecOptions.builder().timeout(Duration.ofSeconds(30)).net(NetPolicy.denyAll()).build();

  @Test
  void theHostJvmIsUnaffectedAfterThousandsOfConfinedSpawns() throws Exception {
    HostRequirements.require(Landlock.availability());
    HostRequirements.require(SeccompFilter.availability());
    Path a = Files.createDirectories(dir.resolve("a"));
    Path b = Files.createDirectories(dir.resolve("b"));
    List<ConfinedRunner> runners = new ArrayList<>();
    runners.add(ConfinedRunner.builder(a.toString()).build());
    runners.add(ConfinedRunner.builder(b.toString()).writablePaths(a.toString()).build());
    runners.add(ConfinedRunner.builder(b.toString()).rootless(true).build());
    if (ThreadNamespaces.mountAvailability().isAvailable()) {
      runners.add(ConfinedRunner.builder(a.toString()).readOnlyHost(true).build());
    }
    int kinds = runners.size();
    String cwd = Path.of("/proc/thread-self/cwd").toRealPath().toString();

    // 2,000 spawns over up to eight confinements: first from the test thread alone (so
    // confinement threads exist before this test touches the common pool), then from common-pool
    // workers too.
    for (int i = 0; i < 200; i++) {
      ExecResult res = runners.get(i % kinds).exec("true", List.of(), i % 3 == 0 ? DEFAULT : DENY);
      assertThat(res.exitCode()).isZero();
    }
    IntStream.range(0, 1800)
        .parallel()
        .forEach(
            i -> {
              ConfinedRunner r = runners.get(i % kinds);
              ExecResult res = r.exec("true", List.of(), i % 3 == 0 ? DEFAULT : DENY);
              assertThat(res.exitCode()).isZero();
            });
    // More distinct confinements than may live: the least recently used retire.
    for (int i = 0; i < 12; i++) {
      Path root = Files.createDirectories(dir.resolve("r" + i));
      ExecResult res =
          ConfinedRunner.builder(root.toString()).build().exec("true", List.of(), DENY);
      assertThat(res.exitCode()).isZero();
    }
    assertThat(ConfinementThreads.live()).isLessThanOrEqualTo(ConfinementThreads.MAX_LIVE);
    assertThat(confinementThreads()).isLessThanOrEqualTo(ConfinementThreads.MAX_LIVE);
    // Every thread of the JVM but the confinement threads (and the namespace probe's, which may
    // still be exiting) is in the host's namespaces.
    assertThat(HostNamespaces.threadsOutside())
        .allSatisfy(t -> assertThat(t).matches("confine-(confine|namespa) .*"));

    // The test thread.
    assertNetworkAndFilesWork();
    assertThat(Path.of("/proc/thread-self/cwd").toRealPath().toString()).isEqualTo(cwd);
    // Every common-pool worker: one task per worker, held at a barrier until all are running.
    int n = ForkJoinPool.commonPool().getParallelism();
    CyclicBarrier barrier = new CyclicBarrier(n);
    List<CompletableFuture<Void>> tasks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      tasks.add(
          CompletableFuture.runAsync(
              () -> {
                try {
                  barrier.await(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
                assertNetworkAndFilesWorkUnchecked();
              }));
    }
    for (CompletableFuture<Void> t : tasks) {
      t.get();
    }
    // A fresh platform thread and a virtual thread.
    for (Thread t :
        List.of(
            Thread.ofPlatform().unstarted(HostUnaffectedTest::assertNetworkAndFilesWorkUnchecked),
            Thread.ofVirtual().unstarted(HostUnaffectedTest::assertNetworkAndFilesWorkUnchecked))) {
      Throwable[] failure = new Throwable[1];
      t.setUncaughtExceptionHandler((th, e) -> failure[0] = e);
      t.start();
      t.join();
      assertThat(failure[0]).isNull();
    }
  }

  private static long confinementThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith(ConfinementThreads.NAME_PREFIX))
        .count();
  }

  private static void assertNetworkAndFilesWorkUnchecked() {
    try {
      assertNetworkAndFilesWork();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void assertNetworkAndFilesWork() throws IOException {
    // /proc/self is the thread-group leader, which never confines itself; /proc/thread-self is
    // the calling thread.
    for (String ns : List.of("net", "mnt")) {
      assertThat(Files.readSymbolicLink(Path.of("/proc/thread-self/ns/" + ns)))
          .as(ns + " namespace of " + Thread.currentThread())
          .isEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns/" + ns)));
    }
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
        Socket accepted = server.accept()) {
      client.getOutputStream().write(42);
      assertThat(accepted.getInputStream().read()).isEqualTo(42);
    }
    for (String dir : List.of("/tmp", "/var/tmp")) {
      Path f = Files.createTempFile(Path.of(dir), "confine-host-", ".txt");
      try {
        Files.writeString(f, "host");
        assertThat(f).hasContent("host");
      } finally {
        Files.delete(f);
      }
    }
  }
}
