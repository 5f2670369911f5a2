/*
 * The child of Confine's memory-overshoot benchmark (dev.confine.bench.CapsReport): allocates
 * memory as fast as it can and reports, honestly and from the inside, how much of it is resident.
 *
 * Mallocs 1 MiB chunks (never freed), touches every page of each (one byte per 4 KiB), and after
 * each chunk writes its own resident set size in bytes (/proc/self/statm field 2 x the page size)
 * as one line to stdout with write(2), unbuffered, so that every line is in the pipe before the
 * next chunk starts. Stops at the limit (default 1 GiB) and sleeps. When a cap kills it, the last
 * line read is its peak resident size to within one chunk.
 *
 * Each line is "RESIDENT FILE": FILE is the file-backed part of RESIDENT (statm field 3, "shared":
 * the executable and libc, mostly), which a memory cgroup charges to whichever cgroup first read
 * those pages, usually not the child's; RESIDENT - FILE is what the child's cgroup is charged for.
 *
 * Usage: alloc_touch [MiB]   (default 1024)
 * scripts/bench compiles it at run time; it is never committed as a binary.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (1L << 20)

static long page_size;
static int statm = -1;

/* Writes "RESIDENT FILE\n" in bytes from /proc/self/statm (reread from offset 0 each time). */
static void say(void) {
  char buf[128];
  ssize_t n = pread(statm, buf, sizeof buf - 1, 0);
  if (n <= 0) _exit(4);
  buf[n] = '\0';
  long size, resident, shared;
  if (sscanf(buf, "%ld %ld %ld", &size, &resident, &shared) != 3) _exit(4);
  char line[64];
  int len = snprintf(line, sizeof line, "%ld %ld\n", resident * page_size, shared * page_size);
  const char *p = line;
  while (len > 0) {
    ssize_t w = write(1, p, (size_t)len);
    if (w <= 0) _exit(3); /* nobody reads: nothing honest left to report */
    p += w;
    len -= (int)w;
  }
}

int main(int argc, char **argv) {
  long mib = argc > 1 ? atol(argv[1]) : 1024;
  page_size = sysconf(_SC_PAGESIZE);
  statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (statm < 0) {
    perror("alloc_touch: /proc/self/statm");
    return 2;
  }
  say();
  for (long i = 0; i < mib; i++) {
    char *chunk = malloc(CHUNK);
    if (chunk == NULL) {
      perror("alloc_touch: malloc");
      return 2;
    }
    for (long off = 0; off < CHUNK; off += 4096) chunk[off] = (char)(i + 1);
    say();
  }
  for (;;) pause();
}
