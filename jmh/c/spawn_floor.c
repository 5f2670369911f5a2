/*
 * The C floor for Confine's spawn benchmark: the same kernel and libc work that one LocalRunner
 * exec of a program does, in a plain C loop on one thread, with no JVM, no event-loop hand-off and
 * no allocation. scripts/bench compiles it at run time; it is never committed as a binary.
 *
 * Per spawn, as dev.confine.linux.Spawner and Execution do:
 *   two pipe2(O_CLOEXEC) pipes for stdout and stderr; posix_spawn with SETSID | SETSIGMASK (empty)
 *   | SETSIGDEF (all-ones set) and the file actions open(0, "/dev/null"), dup2 x2, chdir_np(dir),
 *   closefrom_np(3); close the child's ends; pidfd_open; O_NONBLOCK on the parent's ends; poll the
 *   pidfd and both pipes until the child is reaped with waitid(P_PIDFD) and both pipes are read to
 *   end of file; kill(-pgid, SIGKILL) (LocalRunner's check for leftovers, ESRCH here); close all.
 * With -g CGROUP -p PARENT (two cgroup v1 directories, e.g. an empty freezer cgroup and the one this
 * process is in), it also tracks the tree as LocalRunner's default exec does on a v1 host: this
 * thread's tid written into CGROUP/tasks before the spawn and into PARENT/tasks after it (through
 * files opened once), and once the child is reaped CGROUP/cgroup.procs read for leftovers.
 *
 * Usage: spawn_floor [-r rounds] [-t seconds] [-w warmup-seconds] [-d dir] [-g cgroup -p parent]
 *        [program [args...]]
 * Prints one line per round and a JSON line: {"rounds":[...],"mean":spawns_per_second,
 * "parentCpuMicrosPerSpawn":..., "spawnCallMicros":..., "execToReapMicros":..., "tracked":...}: this process's own
 * CPU time (user + system) per spawn, the children's excluded; the mean time inside posix_spawn
 * (which returns once the child has exec'd); the mean time from then until reaped and drained.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char **environ;

static void die(const char *what, int err) {
  fprintf(stderr, "spawn_floor: %s: %s\n", what, strerror(err));
  exit(1);
}

static void check(const char *what, int rc) {
  if (rc != 0) die(what, rc);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) die("fcntl", errno);
}

/* Reads what is there; returns 1 at end of file (or error), 0 when the pipe is merely empty. */
static int drain(int fd, char *buf, size_t len) {
  for (;;) {
    ssize_t n = read(fd, buf, len);
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    return 1;
  }
}

/* Time spent in posix_spawn (it returns once the child has exec'd) and from then to reaped. */
static double spawn_seconds, wait_seconds;

/* With -g: the tree cgroup's tasks and cgroup.procs, the parent's tasks; this thread's tid. */
static int tracker_tasks = -1, tracker_procs = -1, parent_tasks = -1;
static char tid[16];
static size_t tid_len;

static void enter(int tasks_fd) {
  if (write(tasks_fd, tid, tid_len) != (ssize_t)tid_len) die("write tasks", errno);
}

static int open_in(const char *dir, const char *file, int flags) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int fd = open(path, flags | O_CLOEXEC);
  if (fd < 0) die(path, errno);
  return fd;
}

static void spawn_once(const char *dir, char *const argv[]) {
  static char buf[64 * 1024];
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) < 0) die("pipe2", errno);
  if (pipe2(err, O_CLOEXEC) < 0) die("pipe2", errno);

  posix_spawnattr_t attr;
  posix_spawn_file_actions_t fa;
  check("posix_spawnattr_init", posix_spawnattr_init(&attr));
  check("posix_spawn_file_actions_init", posix_spawn_file_actions_init(&fa));
  sigset_t mask, defaults;
  sigemptyset(&mask);
  memset(&defaults, 0xff, sizeof defaults);
  check("setsigmask", posix_spawnattr_setsigmask(&attr, &mask));
  check("setsigdefault", posix_spawnattr_setsigdefault(&attr, &defaults));
  check("setflags",
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                             POSIX_SPAWN_SETSIGDEF));
  check("addopen", posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0));
  check("adddup2", posix_spawn_file_actions_adddup2(&fa, out[1], 1));
  check("adddup2", posix_spawn_file_actions_adddup2(&fa, err[1], 2));
  check("addchdir_np", posix_spawn_file_actions_addchdir_np(&fa, dir));
  check("addclosefrom_np", posix_spawn_file_actions_addclosefrom_np(&fa, 3));

  pid_t pid;
  double t0 = now();
  if (tracker_tasks >= 0) enter(tracker_tasks);
  check("posix_spawn", posix_spawn(&pid, argv[0], &fa, &attr, argv, environ));
  if (tracker_tasks >= 0) enter(parent_tasks);
  double t1 = now();
  spawn_seconds += t1 - t0;
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(out[1]);
  close(err[1]);

  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) die("pidfd_open", errno);
  set_nonblocking(out[0]);
  set_nonblocking(err[0]);

  struct pollfd fds[3] = {
      {.fd = pidfd, .events = POLLIN}, {.fd = out[0], .events = POLLIN}, {.fd = err[0], .events = POLLIN}};
  int open_fds = 3;
  while (open_fds > 0) {
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll", errno);
    }
    if (fds[0].revents) {
      siginfo_t info;
      if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED) < 0) die("waitid", errno);
      if (info.si_code != CLD_EXITED || info.si_status != 0) {
        fprintf(stderr, "spawn_floor: %s did not exit 0\n", argv[0]);
        exit(1);
      }
      close(pidfd);
      fds[0].fd = -1;
      open_fds--;
    }
    for (int i = 1; i < 3; i++) {
      if (fds[i].revents && drain(fds[i].fd, buf, sizeof buf)) {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_fds--;
      }
    }
  }
  wait_seconds += now() - t1;
  if (tracker_procs >= 0) {
    ssize_t n = pread(tracker_procs, buf, sizeof buf, 0);
    if (n != 0) die("leftovers in the tree cgroup", n < 0 ? errno : EEXIST);
  } else {
    kill(-pid, SIGKILL);
  }
}

int main(int argc, char **argv) {
  int rounds = 3;
  double seconds = 3, warmup = 2;
  const char *dir = "/tmp", *cgroup = NULL, *parent = NULL;
  int opt;
  while ((opt = getopt(argc, argv, "+r:t:w:d:g:p:")) != -1) {
    switch (opt) {
      case 'r': rounds = atoi(optarg); break;
      case 't': seconds = atof(optarg); break;
      case 'w': warmup = atof(optarg); break;
      case 'd': dir = optarg; break;
      case 'g': cgroup = optarg; break;
      case 'p': parent = optarg; break;
      default:
        fprintf(stderr, "usage: %s [-r rounds] [-t seconds] [-w warmup] [-d dir] [-g cgroup -p parent] [program [args]]\n", argv[0]);
        return 2;
    }
  }
  if ((cgroup == NULL) != (parent == NULL)) {
    fprintf(stderr, "spawn_floor: -g and -p go together\n");
    return 2;
  }
  if (cgroup != NULL) {
    tracker_tasks = open_in(cgroup, "tasks", O_WRONLY);
    tracker_procs = open_in(cgroup, "cgroup.procs", O_RDONLY);
    parent_tasks = open_in(parent, "tasks", O_WRONLY);
    tid_len = (size_t)snprintf(tid, sizeof tid, "%ld", (long)syscall(SYS_gettid));
  }
  char *deflt[] = {"/bin/true", NULL};
  char *const *child = optind < argc ? argv + optind : deflt;
  if (rounds < 1) rounds = 1;

  double end = now() + warmup;
  while (now() < end) spawn_once(dir, child);

  double *rate = calloc((size_t)rounds, sizeof *rate), sum = 0;
  long total = 0;
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  spawn_seconds = wait_seconds = 0;
  for (int r = 0; r < rounds; r++) {
    long n = 0;
    double start = now(), t;
    do {
      spawn_once(dir, child);
      n++;
    } while ((t = now()) - start < seconds);
    rate[r] = n / (t - start);
    total += n;
    sum += rate[r];
    printf("round %d: %ld spawns in %.2f s = %.1f spawns/s\n", r + 1, n, t - start, rate[r]);
  }
  getrusage(RUSAGE_SELF, &after);
  double cpu_us = (after.ru_utime.tv_sec - before.ru_utime.tv_sec + after.ru_stime.tv_sec -
                   before.ru_stime.tv_sec) * 1e6 +
                  (after.ru_utime.tv_usec - before.ru_utime.tv_usec + after.ru_stime.tv_usec -
                   before.ru_stime.tv_usec);
  printf("{\"program\":\"%s\",\"rounds\":[", child[0]);
  for (int r = 0; r < rounds; r++) printf("%s%.2f", r ? "," : "", rate[r]);
  printf("],\"mean\":%.2f,\"parentCpuMicrosPerSpawn\":%.1f,\"spawnCallMicros\":%.1f,"
         "\"execToReapMicros\":%.1f,\"tracked\":%s}\n",
         sum / rounds, cpu_us / total, spawn_seconds * 1e6 / total, wait_seconds * 1e6 / total,
         cgroup != NULL ? "true" : "false");
  return 0;
}
